# embed.cmake: writes the file IN as a NUL-terminated C byte array `mlk_schema_sql` into OUT.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* generated from db/schema.sql by harness/embed.cmake; do not edit */\nstatic const unsigned char mlk_schema_sql[] = {${bytes}0x00};\n")
