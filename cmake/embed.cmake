# Write the bytes of IN as a C initializer list ("0x7b,0x0a,...") to OUT:
# docs/openapi.json compiled into src/service/openapi.c.
# usage: cmake -DIN=file -DOUT=file -P embed.cmake
# SPDX-License-Identifier: GPL-3.0-or-later
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "${bytes}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
