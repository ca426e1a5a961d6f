# cmake -DINPUT=FILE -DOUTPUT=HEADER -DNAME=IDENTIFIER -P embed_text.cmake
# Writes HEADER declaring `inline constexpr char NAME[]` with FILE's text (a
# raw string literal), for text the agent must carry inside the library.
file(READ "${INPUT}" text)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_text.cmake; do not edit.\n"
  "#pragma once\n"
  "inline constexpr char ${NAME}[] = R\"strata_embedded(${text})strata_embedded\";\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
