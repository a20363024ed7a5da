#!/usr/bin/env bash
# The shared half of the lab's kernel recipes (lab/kernel-riscv64.sh,
# lab/kernel-aarch64.sh): both guest kernels come from ONE source tree,
# Debian's linux-source-6.1, configured as
#   make ARCH=<arch> tinyconfig  +  lab/common.config  +  lab/<arch>.config
# so that the two differ only where the ISAs do.
#
# Sourced by those scripts, which call:
#   lab_install PKG...      apt-get install what is missing (quietly)
#   lab_source              unpack the tree once into .cache/lab/src/linux-<ver>;
#                           sets LAB_SRC and LAB_VERSION
#   lab_build ...           configure, check, build and cache one Image (below)
# Run on its own (`bash lab/kernel-source.sh`) it only prepares the tree and
# prints its path as the last stdout line.
#
# Messages: progress "lab: ..." on stderr; an error is one "lab: error: ..."
# line (plus the tail of the build log when the build itself failed).

LAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB_SRCPKG=linux-source-6.1
LAB_TARBALL=/usr/src/linux-source-6.1.tar.xz
# What any kernel build here needs besides the cross compiler.  libssl-dev /
# libelf-dev are not needed: no modules, no module signing, no trusted
# keyrings, no objtool/BTF in these configs.
LAB_BUILD_PKGS="$LAB_SRCPKG gcc libc6-dev make flex bison bc perl cpio xz-utils"

die() { echo "lab: error: $*" >&2; exit 1; }
say() { echo "lab: $*" >&2; }

lab_install() {
    local p missing='' sudo=''
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
            || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    say "installing$missing"
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install$missing"
        sudo=sudo
    fi
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    if ! $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
        $sudo apt-get update -qq >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 \
            || die "apt-get install$missing failed"
    fi
}

# The tree lives in .cache/lab/src/linux-<package version>.  Earlier recipes
# unpacked it under .cache/lab/riscv64/; that path stays valid as a symlink
# (tests and notes cite files in it).  While a build runs, the caller holds a
# shared lock on the tree, so a newer package version (which replaces the
# trees of older ones, 1.5 GB each) cannot remove it mid-build.
lab_source() {
    # shellcheck disable=SC2086  # a word list
    lab_install $LAB_BUILD_PKGS
    [ -r "$LAB_TARBALL" ] || die "$LAB_TARBALL missing although $LAB_SRCPKG is installed"
    LAB_VERSION=$(dpkg-query -W -f='${Version}' "$LAB_SRCPKG") || die "cannot read the version of $LAB_SRCPKG"
    [ -n "$LAB_VERSION" ] || die "empty version for $LAB_SRCPKG"
    local top=$LAB_ROOT/.cache/lab/src legacy=$LAB_ROOT/.cache/lab/riscv64/linux-$LAB_VERSION old
    LAB_SRC=$top/linux-$LAB_VERSION
    mkdir -p "$top"
    exec 8>"$top/.lock"
    flock -s 8
    # Exclusive only to unpack (so a build of the other arch, which holds the
    # shared lock, does not hold up a boot whose Image is already cached).
    if [ ! -e "$LAB_SRC/.lab-extracted" ]; then flock -x 8; fi
    if [ ! -e "$LAB_SRC/.lab-extracted" ]; then
        for old in "$top"/linux-*; do
            if [ -d "$old" ] && [ "$old" != "$LAB_SRC" ]; then rm -rf "$old"; fi
        done
        rm -rf "$LAB_SRC.tmp"
        if [ -d "$legacy" ] && [ ! -L "$legacy" ] && [ -e "$legacy/.lab-extracted" ]; then
            say "moving the unpacked $LAB_SRCPKG $LAB_VERSION from $legacy to $LAB_SRC"
            mv "$legacy" "$LAB_SRC"
        else
            say "extracting $LAB_SRCPKG $LAB_VERSION into $LAB_SRC ..."
            mkdir -p "$LAB_SRC.tmp"
            tar -xJf "$LAB_TARBALL" -C "$LAB_SRC.tmp" --strip-components=1 \
                || { rm -rf "$LAB_SRC.tmp"; die "extracting $LAB_TARBALL failed"; }
            [ -e "$LAB_SRC.tmp/Makefile" ] || { rm -rf "$LAB_SRC.tmp"; die "$LAB_TARBALL did not hold a kernel tree"; }
            touch "$LAB_SRC.tmp/.lab-extracted"
            mv "$LAB_SRC.tmp" "$LAB_SRC"
        fi
    fi
    if [ ! -e "$legacy" ] && [ -d "${legacy%/*}" ]; then
        ln -sfn "../src/linux-$LAB_VERSION" "$legacy"
    fi
    flock -s 8
}

# lab_build LABARCH KARCH CROSS IMAGE KEY_OPTS FRAGMENT...
#   LABARCH   riscv64 | aarch64 (cache directory .cache/lab/<LABARCH>)
#   KARCH     the kernel's ARCH= (riscv, arm64)
#   CROSS     CROSS_COMPILE= prefix
#   IMAGE     the image to keep, relative to the build directory
#   KEY_OPTS  options (without CONFIG_) that must be =y whatever the fragments say
#   FRAGMENT  kconfig fragments, merged in order onto tinyconfig
# The result is cached as .cache/lab/<LABARCH>/Image-<version>-<hash>, where
# <hash> is sha256 of the fragments' contents (12 hex digits), with the final
# .config and System.map beside it under the same suffix.  Its path is printed
# as the last stdout line.  A cached Image is returned without taking a lock.
lab_build() {
    local labarch=$1 karch=$2 cross=$3 image=$4 key_opts=$5
    shift 5
    local frags=("$@") f
    for f in "${frags[@]}"; do [ -r "$f" ] || die "kconfig fragment $f not found"; done
    # (LAB_CACHE_DIR: a scratch cache, for trying a config without touching the lab's)
    local cache=${LAB_CACHE_DIR:-$LAB_ROOT/.cache/lab/$labarch} hash tag out
    hash=$(cat "${frags[@]}" | sha256sum | cut -c1-12)
    tag=$LAB_VERSION-$hash
    out=$cache/Image-$tag
    if [ -s "$out" ]; then lab_offsets "$cache" "$tag"; echo "$out"; return 0; fi
    mkdir -p "$cache"
    # One build per arch at a time (two test jobs asking for the kernel at once).
    exec 9>"$cache/.build.lock"
    flock 9
    if [ -s "$out" ]; then echo "$out"; return 0; fi
    # Configure and check against a snapshot of the fragments, so that an edit
    # during the build cannot make the Image's name lie about its config.
    local snap=$cache/fragments.tmp i=0
    rm -rf "$snap"; mkdir -p "$snap"
    for f in "${frags[@]}"; do
        i=$((i + 1)); cp "$f" "$snap/$i-${f##*/}"
        frags[i - 1]=$snap/$i-${f##*/}
    done
    hash=$(cat "${frags[@]}" | sha256sum | cut -c1-12)
    tag=$LAB_VERSION-$hash
    out=$cache/Image-$tag
    if [ -s "$out" ]; then rm -rf "$snap"; echo "$out"; return 0; fi

    # Out of tree, so the shared source stays pristine.  One build directory
    # per arch and version: a fragment change rebuilds incrementally.
    local build=$cache/build-$LAB_VERSION log=$cache/build-$tag.log
    mkdir -p "$build"
    : >"$log"
    local kmake=(make -C "$LAB_SRC" O="$build" ARCH="$karch" CROSS_COMPILE="$cross"
                 KBUILD_BUILD_USER=lab KBUILD_BUILD_HOST=hpmkit)
    fail_build() {
        echo "lab: error: $1 (log: $log); last 20 lines:" >&2
        tail -n 20 "$log" >&2
        exit 1
    }

    local names='' start=$SECONDS
    for f in "${frags[@]}"; do f=${f##*/}; names="$names + lab/${f#*-}"; done
    say "configuring $labarch kernel $LAB_VERSION (tinyconfig$names) ..."
    rm -f "$build/.config"
    "${kmake[@]}" tinyconfig >>"$log" 2>&1 || fail_build "make tinyconfig failed"
    ( cd "$LAB_SRC" && ARCH=$karch CROSS_COMPILE=$cross \
        scripts/kconfig/merge_config.sh -m -O "$build" "$build/.config" "${frags[@]}" ) >>"$log" 2>&1 \
        || fail_build "merge_config.sh failed"
    "${kmake[@]}" olddefconfig >>"$log" 2>&1 || fail_build "make olddefconfig failed"
    lab_check_config "$build/.config" "$key_opts" "${frags[@]}"

    say "building $labarch kernel (about 4 CPU-minutes: 2 minutes on 2 idle cores, 6 on a busy machine; log: $log) ..."
    "${kmake[@]}" -j"${LAB_KERNEL_JOBS:-2}" "${image##*/}" >>"$log" 2>&1 || fail_build "kernel build failed"
    [ -s "$build/$image" ] || fail_build "build produced no $image"
    lab_check_config "$build/.config" "$key_opts" "${frags[@]}"

    cp "$build/.config" "$cache/config-$tag"
    cp "$build/System.map" "$cache/System.map-$tag"
    cp "$build/$image" "$out.tmp"
    mv "$out.tmp" "$out"
    rm -rf "$snap"
    lab_offsets "$cache" "$tag"
    say "kernel ready after $((SECONDS - start)) s: $out"
    echo "$out"
}

# Every "CONFIG_X=value" line of the fragments (and KEY_OPTS as =y) must be in
# .config exactly, every "# CONFIG_X is not set" must not be set: kconfig
# drops what fails a dependency without a word, so say which ones it dropped.
lab_check_config() {
    local cfg=$1 key_opts=$2 bad='' line opt got
    shift 2
    local want
    want=$(for opt in $key_opts; do echo "CONFIG_$opt=y"; done
           cat "$@" | grep -E '^CONFIG_[A-Za-z0-9_]+=')
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        if ! grep -qxF "$line" "$cfg"; then
            got=$(grep -m1 "^${line%%=*}=" "$cfg" || true)
            bad="$bad ${line%%=*}=${got#*=}"
            [ -n "$got" ] || bad="${bad}n"
        fi
    done < <(echo "$want" | sort -u)
    while IFS= read -r line; do
        case $line in
            "# CONFIG_"*" is not set")
                opt=${line#\# }; opt=${opt%% *}
                got=$(grep -m1 "^$opt=" "$cfg" || true)
                [ -z "$got" ] || bad="$bad $got" ;;
        esac
    done < <(cat "$@")
    local names='' f
    for f in "$@"; do f=${f##*/}; names="$names lab/${f#*-}"; done
    [ -z "$bad" ] || die "kernel .config does not honour$names (got:$bad; see $cfg)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    lab_source
    echo "$LAB_SRC"
fi

# Offsets of the kernel structures the lab's in-emulator sampler reads from guest memory
# (lab/pes: the running task's pid, tgid, comm, parent and executable), as
# "struct.field value" lines in $cache/offsets-$tag.  They are asked from the compiler with
# the exact flags kbuild used for kernel/fork.c of this build (its .cmd file), so they
# follow the config; the guest kernel itself is not changed.  Cached; needs the build folder.
LAB_NOFFSETS=30   # the HPMLAB_OFF lines below
lab_offsets() {
    local cache tag=$2 build
    cache=$(cd "$1" && pwd) || die "no folder $1"
    build=$cache/build-$LAB_VERSION
    local dst=$cache/offsets-$tag
    # a file from an older list (fewer names) is made again from the same build
    [ -s "$dst" ] && [ "$(wc -l <"$dst")" -eq "$LAB_NOFFSETS" ] && return 0
    local cmdf=$build/kernel/.fork.o.cmd
    [ -r "$cmdf" ] || die "cannot make $dst: $cmdf is missing (remove $cache/Image-$tag to rebuild)"
    local cc
    cc=$(sed -n 's/^cmd_kernel\/fork\.o := //p' "$cmdf" | sed 's/ -Wp,-MMD,[^ ]*//; s/ -c -o kernel\/fork\.o .*$//')
    [ -n "$cc" ] || die "cannot read the compiler command from $cmdf"
    local src=$cache/offsets.tmp.c asm=$cache/offsets.tmp.s
    cat >"$src" <<'C'
#include <linux/sched.h>
#include <linux/mm_types.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/dcache.h>
#include <linux/path.h>
#define HPMLAB_OFF(name, val) asm volatile("\n.ascii \"@@HPMOFF " name " %0\"" : : "i"(val))
void hpmlab_offsets(void);
void hpmlab_offsets(void)
{
	HPMLAB_OFF("task_struct.pid", offsetof(struct task_struct, pid));
	HPMLAB_OFF("task_struct.tgid", offsetof(struct task_struct, tgid));
	HPMLAB_OFF("task_struct.comm", offsetof(struct task_struct, comm));
	HPMLAB_OFF("task_struct.mm", offsetof(struct task_struct, mm));
	HPMLAB_OFF("task_struct.active_mm", offsetof(struct task_struct, active_mm));
	HPMLAB_OFF("task_struct.real_parent", offsetof(struct task_struct, real_parent));
	HPMLAB_OFF("task_struct.group_leader", offsetof(struct task_struct, group_leader));
	HPMLAB_OFF("task_struct.flags", offsetof(struct task_struct, flags));
	HPMLAB_OFF("task_struct.stack", offsetof(struct task_struct, stack));
	HPMLAB_OFF("sizeof.task_struct", sizeof(struct task_struct));
	HPMLAB_OFF("mm_struct.exe_file", offsetof(struct mm_struct, exe_file));
	HPMLAB_OFF("mm_struct.start_code", offsetof(struct mm_struct, start_code));
	HPMLAB_OFF("mm_struct.end_code", offsetof(struct mm_struct, end_code));
	HPMLAB_OFF("mm_struct.pgd", offsetof(struct mm_struct, pgd));
	HPMLAB_OFF("file.f_path", offsetof(struct file, f_path));
	HPMLAB_OFF("path.dentry", offsetof(struct path, dentry));
	HPMLAB_OFF("dentry.d_name", offsetof(struct dentry, d_name));
	HPMLAB_OFF("dentry.d_iname", offsetof(struct dentry, d_iname));
	HPMLAB_OFF("qstr.name", offsetof(struct qstr, name));
	HPMLAB_OFF("dentry.d_parent", offsetof(struct dentry, d_parent));
	HPMLAB_OFF("vm_area_struct.vm_start", offsetof(struct vm_area_struct, vm_start));
	HPMLAB_OFF("vm_area_struct.vm_end", offsetof(struct vm_area_struct, vm_end));
	HPMLAB_OFF("vm_area_struct.vm_mm", offsetof(struct vm_area_struct, vm_mm));
	HPMLAB_OFF("vm_area_struct.vm_flags", offsetof(struct vm_area_struct, vm_flags));
	HPMLAB_OFF("vm_area_struct.vm_pgoff", offsetof(struct vm_area_struct, vm_pgoff));
	HPMLAB_OFF("vm_area_struct.vm_file", offsetof(struct vm_area_struct, vm_file));
	HPMLAB_OFF("vm_exec", VM_EXEC);
	HPMLAB_OFF("page_shift", PAGE_SHIFT);
	HPMLAB_OFF("thread_size", THREAD_SIZE);
	HPMLAB_OFF("pt_regs.size", sizeof(struct pt_regs));
}
C
    # shellcheck disable=SC2086  # kbuild's own word list
    if ! (cd "$build" && eval "$cc -S -o '$asm' '$src'") 2>"$cache/offsets.tmp.log"; then
        echo "lab: error: compiling the structure offsets failed; last lines:" >&2
        tail -n 5 "$cache/offsets.tmp.log" >&2
        exit 1
    fi
    sed -n 's/.*@@HPMOFF \([a-z_.]*\) [$#]*\([0-9]*\).*/\1 \2/p' "$asm" >"$dst.tmp"
    [ "$(wc -l <"$dst.tmp")" -eq "$LAB_NOFFSETS" ] || die "offsets: expected $LAB_NOFFSETS values, got $(wc -l <"$dst.tmp") (see $asm)"
    mv "$dst.tmp" "$dst"
    rm -f "$src" "$asm" "$cache/offsets.tmp.log"
}
