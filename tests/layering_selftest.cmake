# Shows that both layering checks (cmake/StrataLayering.cmake, reading
# cmake/layering_rules.cmake) fail on a violation and pass without one: each
# runs on a small tree in WORK, once clean and once per planted break, the
# nested folders (import/cpu, sampler/inprocess) among them.
# Usage: cmake -DROOT=<repo> -DWORK=<scratch folder> -P layering_selftest.cmake
cmake_minimum_required(VERSION 3.25)
set(failures "")

function(expect what rc output want_fail want_text)
  if(want_fail AND rc EQUAL 0)
    set(problem "passed, a failure was expected")
  elseif(NOT want_fail AND NOT rc EQUAL 0)
    set(problem "failed:\n${output}")
  else()
    string(FIND "${output}" "${want_text}" at)
    if(at EQUAL -1)
      set(problem "does not say '${want_text}':\n${output}")
    endif()
  endif()
  if(problem)
    set(failures "${failures}\n${what} ${problem}" PARENT_SCOPE)
  else()
    message(STATUS "ok: ${what}")
  endif()
endfunction()

# --- the #include check -------------------------------------------------------
set(tree ${WORK}/includes)
file(REMOVE_RECURSE ${tree})
file(WRITE ${tree}/src/common/strings.h "#pragma once\n")
file(WRITE ${tree}/src/analysis/stats.h "#include \"common/strings.h\"\n")
file(WRITE ${tree}/src/store/db.cc "#include \"common/strings.h\"\n#include <sqlite3.h>\n#include \"nlohmann/json.hpp\"\n")
file(WRITE ${tree}/src/import/cpu/to_profile.cc
     "#include \"analysis/stats.h\"\n#include \"import/spool.h\"\n#include \"local.h\"\n")
file(WRITE ${tree}/src/sampler/inprocess/run.cc "#include \"sampler/sampler.h\"\n")
file(WRITE ${tree}/src/cli/main.cc "#include \"import/cpu/to_profile.h\"\n")

function(check_includes what want_fail want_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${tree}/src
                          -P ${ROOT}/tests/layering_test.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  expect("includes, ${what}:" "${rc}" "${out}${err}" ${want_fail} "${want_text}")
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

function(plant file text what want_text)
  file(WRITE ${tree}/src/${file} "${text}")
  check_includes("${what}" TRUE "${want_text}")
  file(REMOVE ${tree}/src/${file})
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

check_includes("clean tree" FALSE "no forbidden includes")
plant(store/bad.cc "#include \"analysis/stats.h\"\n" "store on analysis"
      "src/store/bad.cc: store must not include analysis's analysis/stats.h")
plant(import/cpu/bad.cc "  #  include \"report/table.h\"\n" "import/cpu on report"
      "src/import/cpu/bad.cc: import_cpu must not include report's report/table.h")
plant(sampler/inprocess/bad.h "#include \"store/db.h\"\n" "sampler/inprocess on store"
      "src/sampler/inprocess/bad.h: sampler_inprocess must not include store's store/db.h")
plant(analysis/bad.cc "#include \"import/cpu/to_profile.h\"\n" "analysis on import/cpu"
      "src/analysis/bad.cc: analysis must not include import_cpu's import/cpu/to_profile.h")
plant(cli/bad.cc "#include \"agent/config.h\"\n" "cli on agent"
      "src/cli/bad.cc: cli must not include agent's agent/config.h")
plant(sampler/inprocess/sigprof_preload.cc "#include \"sampler/sampler.h\"\n"
      "the preload library on the sampler"
      "src/sampler/inprocess/sigprof_preload.cc: sampler_inprocess must not include sampler's")
plant(newthing/x.cc "#include \"common/strings.h\"\n" "a folder in no module"
      "src/newthing/x.cc: its folder is in no module")

# --- the link graph, at configure time -------------------------------------------
set(project ${WORK}/links)
file(REMOVE_RECURSE ${project})
file(WRITE ${project}/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(layering_probe LANGUAGES C)
include(${ROOT}/cmake/StrataLayering.cmake)
add_subdirectory(src)
strata_check_layering()
")
file(WRITE ${project}/empty.c "int strata_layering_probe;\n")
set(libs common:strata_common format:strata_format store:strata_store
    analysis:strata_analysis report:strata_report import:strata_import
    import/cpu:strata_import_cpu sampler:strata_sampler
    sampler/inprocess:strata_sampler_inprocess sampler/inprocess:strata_sigprof)
set(subdirs "")
foreach(entry IN LISTS libs)
  string(REPLACE ":" ";" pair "${entry}")
  list(GET pair 0 dir)
  list(GET pair 1 lib)
  file(APPEND ${project}/src/${dir}/CMakeLists.txt
       "add_library(${lib} STATIC ${project}/empty.c)\n")
  if(NOT dir MATCHES "/")  # import/ and sampler/ add their nested folders themselves
    list(APPEND subdirs ${dir})
  endif()
endforeach()
list(REMOVE_DUPLICATES subdirs)
list(JOIN subdirs " " subdirs)
file(APPEND ${project}/src/CMakeLists.txt "foreach(d ${subdirs} cli newthing)
  if(EXISTS \${CMAKE_CURRENT_SOURCE_DIR}/\${d}/CMakeLists.txt)
    add_subdirectory(\${d})
  endif()
endforeach()
")
# The allowed edges, the nested folders and the preload library among them.
file(APPEND ${project}/src/store/CMakeLists.txt
     "target_link_libraries(strata_store PUBLIC strata_common)\n")
file(APPEND ${project}/src/analysis/CMakeLists.txt
     "target_link_libraries(strata_analysis PUBLIC strata_store)\n")
file(APPEND ${project}/src/report/CMakeLists.txt
     "target_link_libraries(strata_report PUBLIC strata_analysis)\n")
file(APPEND ${project}/src/import/CMakeLists.txt
     "add_subdirectory(cpu)\ntarget_link_libraries(strata_import PUBLIC strata_import_cpu strata_store strata_format)\n")
file(APPEND ${project}/src/import/cpu/CMakeLists.txt
     "target_link_libraries(strata_import_cpu PUBLIC strata_analysis strata_sampler_inprocess)\n")
file(APPEND ${project}/src/sampler/CMakeLists.txt "add_subdirectory(inprocess)\n")
file(APPEND ${project}/src/sampler/inprocess/CMakeLists.txt
     "target_link_libraries(strata_sampler_inprocess PUBLIC strata_sampler strata_format)\n"
     "target_link_libraries(strata_sigprof PRIVATE strata_format)\n")
file(WRITE ${project}/src/cli/CMakeLists.txt
     "add_executable(strata ${project}/empty.c)\n"
     "target_link_libraries(strata PRIVATE strata_report strata_import)\n")

function(check_links what plant want_fail want_text)
  set(build ${WORK}/links-build)
  file(REMOVE_RECURSE ${build})
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${project} -B ${build} "-DPLANT=${plant}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  expect("links, ${what}:" "${rc}" "${out}${err}" ${want_fail} "${want_text}")
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

# Each planted edge is one line, enabled by -DPLANT=<name>.
file(APPEND ${project}/src/store/CMakeLists.txt "if(PLANT STREQUAL \"store\")
  target_link_libraries(strata_store PRIVATE strata_analysis)
endif()
")
file(APPEND ${project}/src/analysis/CMakeLists.txt "if(PLANT STREQUAL \"analysis\")
  target_link_libraries(strata_analysis PRIVATE strata_import_cpu)
endif()
")
file(APPEND ${project}/src/sampler/inprocess/CMakeLists.txt "if(PLANT STREQUAL \"preload\")
  target_link_libraries(strata_sigprof PRIVATE strata_sampler)
endif()
if(PLANT STREQUAL \"inprocess\")
  target_link_libraries(strata_sampler_inprocess PRIVATE strata_store)
endif()
")
file(APPEND ${project}/src/cli/CMakeLists.txt "if(PLANT STREQUAL \"cli\")
  add_subdirectory(\${CMAKE_CURRENT_SOURCE_DIR}/../agent \${CMAKE_CURRENT_BINARY_DIR}/agent)
  target_link_libraries(strata PRIVATE strata_agent)
endif()
")
file(WRITE ${project}/src/agent/CMakeLists.txt "add_library(strata_agent STATIC ${project}/empty.c)\n")
file(WRITE ${project}/src/newthing/CMakeLists.txt "if(PLANT STREQUAL \"newthing\")
  add_library(strata_newthing STATIC ${project}/empty.c)
endif()
")

check_links("clean tree" "" FALSE "Generating done")
check_links("store on analysis" store TRUE
            "strata_store (store) must not depend on strata_analysis (analysis)")
check_links("analysis on import/cpu, seen from report too" analysis TRUE
            "strata_report (report) must not depend on strata_import_cpu (import_cpu) (through strata_analysis)")
check_links("the preload library on the sampler" preload TRUE
            "strata_sigprof (sampler_inprocess) must not depend on strata_sampler (sampler)")
check_links("sampler/inprocess on store" inprocess TRUE
            "strata_sampler_inprocess (sampler_inprocess) must not depend on strata_store (store)")
check_links("cli on agent" cli TRUE "strata (cli) must not depend on strata_agent (agent)")
check_links("a target in no module" newthing TRUE
            "strata_newthing (src/newthing) is in no module")

if(failures)
  message(FATAL_ERROR "layering self-test:${failures}")
endif()
