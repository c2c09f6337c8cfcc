#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fails naming every tracked source file without an SPDX-License-Identifier
# line among its first three lines (a shebang stays first). Source: C and
# headers, Python, shell, CMake, Makefile, registry.c.in, and every tracked
# file starting with #! (bench/, scripts/, .ci/).
#
#   scripts/check-spdx.sh [SOURCE_DIR]
set -eu
cd "${1:-.}"
missing=0
git ls-files -z | xargs -0 -n 1 sh -c '
  f=$1
  case $f in
    *.c | *.h | *.py | *.sh | *.cmake | *.c.in | CMakeLists.txt | */CMakeLists.txt | Makefile) ;;
    *) [ "$(head -c 2 "$f")" = "#!" ] || exit 0 ;;
  esac
  head -n 3 "$f" | grep -q "SPDX-License-Identifier: BSD-3-Clause" && exit 0
  echo "no SPDX-License-Identifier line: $f"
  exit 1
' sh || missing=1
if [ "$missing" -ne 0 ]; then
  echo "add '# SPDX-License-Identifier: BSD-3-Clause' (C: /* ... */) at the top" >&2
  exit 1
fi
echo "every tracked source file carries its SPDX-License-Identifier line"
