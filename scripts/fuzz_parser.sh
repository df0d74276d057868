#!/usr/bin/env bash
# The IR text parser's fuzzer: scripts/fuzz.sh parser [SECONDS].
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" parser "$@"
