i=0; while [ $i -lt 1 ]; do gzip -c /bin/busybox >/dev/null; i=$((i+1)); done
