#!/bin/bash
# Runs the built test suites (make test) with a deadline. A test that hangs must fail the run with
# its name, not stall CI until the job's own limit: on timeout this prints every test that started
# and never finished, then the threads of the test process, and exits 124.
set -uo pipefail
limit=${COURIER_TEST_TIMEOUT:-1200}
log=.build/test-output.log
# The interop matrix's rows (InteropTests), printed as a table when the run ends.
rm -rf .build/interop
swift test --skip-build "$@" 2>&1 | tee "$log" &
runner=$!
for ((waited = 0; waited < limit; waited++)); do
  if ! kill -0 "$runner" 2>/dev/null; then
    wait "$runner"
    status=$?
    python3 Tests/Interop/table.py .build/interop
    exit $status
  fi
  sleep 1
done
echo "courier: the tests did not finish within ${limit} s; still running:"
sed -nE 's/.*Test ([^ ]+) started.*/\1/p' "$log" | sort -u > .build/test-started.txt
sed -nE 's/.*Test ([^ ]+) (with .* )?(passed|failed|skipped).*/\1/p' "$log" | sort -u > .build/test-ended.txt
comm -23 .build/test-started.txt .build/test-ended.txt | sed 's/^/  /'
for pid in $(pgrep -f 'CourierPackageTests.xctest'); do
  echo "courier: threads of $pid:"
  if command -v gdb >/dev/null; then
    timeout 60 gdb -batch -p "$pid" -ex 'thread apply all bt 12' 2>/dev/null | grep -E '^(Thread|#)' | head -400
  else
    timeout 60 lldb --batch -p "$pid" -o 'thread backtrace all -c 12' 2>/dev/null | head -400
  fi
done
pkill -f 'CourierPackageTests.xctest'
exit 124
