i=0; while [ $i -lt 10 ]; do cp /bin/busybox /tmp/x; rm /tmp/x; i=$((i+1)); done
