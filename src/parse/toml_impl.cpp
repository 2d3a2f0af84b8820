// toml++'s implementation, compiled once into the library from Debian's headers
// (libtomlplusplus-dev), so that the binary does not load libtomlplusplus.so at start-up.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
