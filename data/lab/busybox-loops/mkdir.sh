i=0; while [ $i -lt 1000 ]; do mkdir /tmp/d$i; i=$((i+1)); done; rm -r /tmp/d*
