dd if=/dev/urandom of=/dev/null bs=4096 count=1500 2>/dev/null
