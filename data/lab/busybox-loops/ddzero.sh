dd if=/dev/zero of=/dev/null bs=65536 count=12000 2>/dev/null
