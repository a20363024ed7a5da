i=0; while [ $i -lt 1 ]; do ls -lR / >/dev/null 2>&1; i=$((i+1)); done
