i=0; while [ $i -lt 400 ]; do busybox true; i=$((i+1)); done
