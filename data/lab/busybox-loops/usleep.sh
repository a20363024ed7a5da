i=0; while [ $i -lt 1000 ]; do usleep 10; i=$((i+1)); done
