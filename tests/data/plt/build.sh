#!/bin/sh
# Builds the PLT fixtures (tests/py/test_symbols_plt.py) with Debian 12's compilers:
# gcc (x86-64), aarch64-linux-gnu-gcc and riscv64-linux-gnu-gcc (gcc-aarch64-linux-gnu,
# gcc-riscv64-linux-gnu), binutils 2.40's ld.bfd (and gold for one x86-64 variant), then
# writes each one's golden list with make_golden.py. Run from this folder: sh build.sh
set -eu
OUT=bin
mkdir -p "$OUT" golden
# small files: no separate code pages (bfd), 4 KiB pages
COMMON="-Os -g0 -fno-asynchronous-unwind-tables -Wl,-z,max-page-size=4096 -Wl,--hash-style=gnu"
build() {   # build NAME CC CFLAGS... (the last source is plt_main.c unless CFLAGS say -shared)
    name=$1; cc=$2; shift 2
    case " $* " in
        *" -shared "*) src=plt_lib.c ;;
        *) src=plt_main.c ;;
    esac
    case " $* " in
        *" -fuse-ld=gold "*) sep= ;;
        *) sep=-Wl,-z,noseparate-code ;;
    esac
    $cc $COMMON $sep "$@" -o "$OUT/$name" "$src" 2>&1 | grep -v "BTI turned on by -z force-bti" >&2 || true
    test -f "$OUT/$name"
}
X=x86_64-linux-gnu-gcc
build x86_64-lazy      $X
build x86_64-now       $X -Wl,-z,now
build x86_64-ibt       $X -fcf-protection -Wl,-z,ibtplt
build x86_64-ibt-now   $X -fcf-protection -Wl,-z,ibtplt,-z,now
build x86_64-nopie     $X -no-pie
build x86_64-gold      $X -fuse-ld=gold
build x86_64-stripped  $X -s
build x86_64-lib.so    $X -shared -fPIC
A=aarch64-linux-gnu-gcc
build aarch64-lazy     $A
build aarch64-now      $A -Wl,-z,now
build aarch64-nopie    $A -no-pie
build aarch64-bti      $A -mbranch-protection=standard -Wl,-z,force-bti
build aarch64-bti-nopie $A -no-pie -mbranch-protection=standard -Wl,-z,force-bti
build aarch64-pac      $A -mbranch-protection=standard -Wl,-z,pac-plt
build aarch64-bti-pac-nopie $A -no-pie -mbranch-protection=standard -Wl,-z,force-bti,-z,pac-plt
build aarch64-lib.so   $A -shared -fPIC
R=riscv64-linux-gnu-gcc
build riscv64-lazy     $R
build riscv64-now      $R -Wl,-z,now
build riscv64-nopie    $R -no-pie
build riscv64-lib.so   $R -shared -fPIC
for f in "$OUT"/*; do
    python3 make_golden.py "$f" > "golden/$(basename "$f").txt"
done
