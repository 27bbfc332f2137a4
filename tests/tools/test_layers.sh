#!/usr/bin/env bash
# The layering of the source tree (README "Design"): each layer includes only
# the layers below it.
#
#   core/                      nothing of the project above it
#   bonds/, contact/, fields/  core/ and their own folder (never each other)
#   engine/                    core/, bonds/, contact/, fields/, engine/
#   scene/                     the above and scene/
#   io/                        the above and io/ (never apps/)
#   mpi/                       core/ .. engine/ and mpi/ (the MPI transport)
#   run/                       core/ .. io/ and run/ (the run loop; never apps/ or mpi/)
#   python/                    core/ .. io/, run/ and python/ (the Python module; never apps/ or mpi/)
#
# Usage: tests/tools/test_layers.sh SOURCE_DIR. Prints each include that
# breaks the rule and a closing "N passed, M failed" line; exits 1 on any.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
passed=0
failed=0
check() {  # check FOLDER ALLOWED-FOLDERS...
  local folder=$1; shift
  local allowed="$*" bad=0
  while IFS= read -r line; do
    local file=${line%%:*}
    local target
    target=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$line")
    local top=${target%%/*}
    local ok=0
    for a in $allowed; do [ "$top" = "$a" ] && ok=1; done
    if [ $ok -eq 0 ]; then
      echo "layer violation: $file includes \"$target\" ($folder/ may include only: $allowed)"
      bad=1
    fi
  done < <(grep -rn '#include "' "$folder" --include='*.hpp' --include='*.cpp' || true)
  if [ $bad -eq 0 ]; then passed=$((passed + 1)); echo "ok: $folder/"; else failed=$((failed + 1)); fi
}
check core core
check bonds core bonds
check contact core contact
check fields core fields
check engine core bonds contact fields engine
check scene core bonds contact fields engine scene
check io core bonds contact fields engine scene io
check mpi core bonds contact fields engine mpi
check run core bonds contact fields engine scene io run
check python core bonds contact fields engine scene io run python
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
