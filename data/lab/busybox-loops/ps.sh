i=0; while [ $i -lt 240 ]; do ps >/dev/null; i=$((i+1)); done
