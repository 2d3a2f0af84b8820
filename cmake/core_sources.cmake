# The library's sources, one folder per pipeline stage (include/gpusim/gpusim.hpp names the order),
# relative to the source root, and its embedded catalog: the native build (CMakeLists.txt) and the
# WebAssembly build (web/CMakeLists.txt) compile the same.
set(GPUSIM_CORE_SOURCES
  src/base/diagnostics.cpp
  src/base/names.cpp
  src/base/parallel.cpp
  src/units/parse.cpp
  src/workload/model.cpp
  src/workload/lora.cpp
  src/workload/resnet.cpp
  src/workload/precision.cpp
  src/workload/model_error.cpp
  src/parse/reader.cpp
  src/parse/toml_limits.cpp
  src/parse/hardware_specs.cpp
  src/parse/runtime_specs.cpp
  src/parse/model_specs.cpp
  src/parse/ranges.cpp
  src/parse/declared_ranges.cpp
  src/parse/model_error.cpp
  src/parse/hf_config.cpp
  src/parse/hf_hub.cpp
  src/parse/json_scan.cpp
  src/parse/hf_moe.cpp
  src/parse/recipe.cpp
  src/catalog/catalog.cpp
  src/catalog/catalog_check.cpp
  src/cost/cost.cpp
  src/scenario/loader.cpp
  src/scenario/system.cpp
  src/scenario/model.cpp
  src/scenario/layout.cpp
  src/scenario/runtime.cpp
  src/scenario/schema.cpp
  src/scenario/serving.cpp
  src/scenario/training.cpp
  src/scenario/variants.cpp
  src/lowering/mla.cpp
  src/lowering/moe.cpp
  src/lowering/transformer.cpp
  src/lowering/quantized.cpp
  src/lowering/resnet.cpp
  src/lowering/vit.cpp
  src/physics/kernel.cpp
  src/physics/memory.cpp
  src/physics/collectives.cpp
  src/physics/parallel.cpp
  src/physics/power.cpp
  src/physics/host.cpp
  src/physics/offload.cpp
  src/step/evaluator.cpp
  src/step/training.cpp
  src/step/inference.cpp
  src/step/iteration.cpp
  src/step/serving.cpp
  src/step/percentiles.cpp
  src/step/serving_stretch.cpp
  src/step/serving_load.cpp
  src/step/serving_bounds.cpp
  src/step/serving_decoders.cpp
  src/step/serving_continuous.cpp
  src/step/serving_kv.cpp
  src/step/serving_static.cpp
  src/explain/diagnose.cpp
  src/explain/advice.cpp
  src/explain/offload_advice.cpp
  src/explain/roofline.cpp
  src/answer/estimate.cpp
  src/answer/fields.cpp
  src/answer/slo.cpp
  src/answer/uncertainty.cpp
  src/answer/model_error.cpp
  src/search/plan.cpp
  src/search/plan_serving.cpp
  src/search/sweep.cpp
  src/search/compare.cpp
  src/search/systems.cpp
  src/validation/measurement.cpp
  src/validation/predict.cpp
  src/validation/summary.cpp
  src/validation/model_error.cpp
  src/validation/calibrate.cpp
  src/validation/collective_fit.cpp
  src/validation/fit_review.cpp
  src/validation/remainders.cpp
  src/validation/citations.cpp
  src/validation/cross_validate.cpp
  src/report/format.cpp
  src/report/model_spec.cpp
  src/report/scenario_templates.cpp
  src/report/words.cpp
  src/report/estimate_report.cpp
  src/report/roofline_report.cpp
  src/report/breakeven_report.cpp
  src/report/plot.cpp
  src/report/charts.cpp
  src/report/systems_report.cpp
  src/report/systems_chart.cpp
  src/report/html_report.cpp
  src/report/search_report.cpp
  src/report/serving_plan_report.cpp
  src/report/catalog_report.cpp
  src/report/validation_report.cpp
  src/report/cross_validation_report.cpp
  src/app/calibrate.cpp
  src/app/compare.cpp
  src/app/estimate.cpp
  src/app/gpu_variant.cpp
  src/app/init.cpp
  src/app/model_import.cpp
  src/app/plan.cpp
  src/app/roofline.cpp
  src/app/specs.cpp
  src/app/validate.cpp
  src/app/sweep.cpp
)

# The spec catalog embedded in the library, so gpusim runs from anywhere: the rule that generates
# its source (cmake/embed_specs.cmake) from `root`/specs into `out` (a path in the build tree).
function(gpusim_embed_specs root out)
  file(GLOB_RECURSE spec_files CONFIGURE_DEPENDS "${root}/specs/*.toml")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DSPEC_ROOT=${root}/specs -DOUT=${out} -P ${root}/cmake/embed_specs.cmake
    DEPENDS ${spec_files} ${root}/cmake/embed_specs.cmake
    COMMENT "Embedding specs/ into the library")
endfunction()
