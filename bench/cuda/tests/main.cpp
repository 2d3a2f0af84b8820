// Catch2 main of the gpusim-bench host-side tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
