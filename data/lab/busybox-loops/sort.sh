seq 1 60000 > /tmp/s; i=0; while [ $i -lt 1 ]; do sort -r /tmp/s > /tmp/t; i=$((i+1)); done
