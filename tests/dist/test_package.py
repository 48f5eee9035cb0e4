#!/usr/bin/env python3
"""[package] The Debian package: `dpkg-buildpackage -us -uc -b` on a copy of this source tree (nothing is
written into the checkout) builds btfslim_VERSION_ARCH.deb with meson.build's version; lintian finds no
error and no warning; the package holds the binary (linked to the shared libraries, Depends from them),
the manual and the three shells' completions where Debian's packages put them, and the copyright file;
unpacked into a fresh root with dpkg -x, the binary runs, man finds its pages, and bash, zsh and fish
load its completions from there."""

import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from runner import SOURCE_DIR, Checks, temp_dir  # noqa: E402

c = Checks()
root = temp_dir("btfslim-package-")


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


version = re.search(r"project\('btfslim'.*?version\s*:\s*'([^']+)'", open(os.path.join(SOURCE_DIR, "meson.build")).read(),
                    re.S).group(1)
changelog = open(os.path.join(SOURCE_DIR, "debian", "changelog")).readline()
c.check(changelog.startswith(f"btfslim ({version})"), f"debian/changelog's version is meson.build's ({version})",
        changelog)
arch = sh(["dpkg", "--print-architecture"]).stdout.strip()
man_pages = re.findall(r"'(btfslim(?:-[a-z]+)?)'", open(os.path.join(SOURCE_DIR, "man", "meson.build")).read())

# The source as a clean clone has it (the working tree's tracked and new files, not build directories).
src = os.path.join(root, "btfslim")
files = sh(["git", "-C", SOURCE_DIR, "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
if files.returncode == 0:
    for rel in filter(None, files.stdout.split("\0")):
        from_ = os.path.join(SOURCE_DIR, rel)
        if os.path.isfile(from_):
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            shutil.copy2(from_, os.path.join(src, rel))
else:
    shutil.copytree(SOURCE_DIR, src, ignore=shutil.ignore_patterns("build*", ".git"))

beside = set(os.listdir(os.path.dirname(SOURCE_DIR)))
# noopt (-O0): what is checked here is the packaging, not the compiler's optimizer, which the test build
# itself exercises on the same sources (release, -O3); at -O2 this compile was most of the test's time.
build = sh(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src, env=dict(os.environ, DEB_BUILD_OPTIONS="parallel=2 noopt"))
deb = os.path.join(root, f"btfslim_{version}_{arch}.deb")
if not c.check(build.returncode == 0 and os.path.isfile(deb), f"dpkg-buildpackage builds {os.path.basename(deb)}",
               build.stdout[-3000:] + build.stderr[-3000:]):
    sys.exit(c.finish())
print(f"note: {os.path.basename(deb)} is {os.path.getsize(deb):,} bytes")

lintian = sh(["lintian", "--display-info", "--tag-display-limit", "0", deb])
bad = [l for l in lintian.stdout.split("\n") if re.match(r"[EW]: ", l)]
print(lintian.stdout, end="")
c.equal(bad, [], "lintian: no error and no warning")

fields = sh(["dpkg-deb", "--field", deb, "Package", "Version", "Architecture", "Depends", "Recommends"]).stdout
c.check(f"Version: {version}\n" in fields and f"Architecture: {arch}\n" in fields, "control: version and architecture",
        fields)
depends = re.search(r"^Depends: (.*)$", fields, re.M)
depends = depends.group(1) if depends else ""
for lib in ("libbpf1", "libelf1", "libfmt9", "libtomlplusplus3", "libc6", "libstdc++6"):
    c.check(re.search(rf"(^|, ){re.escape(lib)}( |,|$)", depends) is not None, f"Depends on {lib} (shlibs)", depends)
c.check("libarchive13" in fields.split("Recommends:")[-1], "Recommends libarchive13 (opened when reading an archive)")

listing = sh(["dpkg-deb", "--contents", deb]).stdout
paths = {l.split()[-1].lstrip(".") for l in listing.split("\n") if l}
want = {"/usr/bin/btfslim", "/usr/share/bash-completion/completions/btfslim",
        "/usr/share/zsh/vendor-completions/_btfslim", "/usr/share/fish/vendor_completions.d/btfslim.fish",
        "/usr/share/doc/btfslim/copyright", "/usr/share/doc/btfslim/changelog.gz"}
want |= {f"/usr/share/man/man1/{p}.1.gz" for p in man_pages}
c.equal(sorted(want - paths), [], "the package holds the binary, man pages, completions, copyright")

# A fresh root, as dpkg -x unpacks it.
fresh = os.path.join(root, "root")
c.equal(sh(["dpkg", "-x", deb, fresh]).returncode, 0, "dpkg -x into a fresh root")
binary = os.path.join(fresh, "usr/bin/btfslim")
v = sh([binary, "--version"])
c.check(v.returncode == 0 and v.stdout.startswith(f"btfslim {version}"), "btfslim --version from the package", v.stdout + v.stderr)
ldd = sh(["ldd", binary]).stdout
c.check("libbpf.so.1" in ldd and "libelf" in ldd and "libstdc++" in ldd, "linked to the shared libraries", ldd)
m = sh([binary, "measure", "vmlinux"])
c.check(m.returncode == 0 and "kernel memory" in m.stdout, "btfslim measure vmlinux from the package",
        m.stdout[-500:] + m.stderr)
ref = sh([os.environ["BTFSLIM"], "measure", "vmlinux"])
c.equal(m.stdout, ref.stdout, "the packaged binary measures as the built one")

man_env = dict(os.environ, MANPATH=os.path.join(fresh, "usr/share/man"))
for page in man_pages:
    w = sh(["man", "-w", page], env=man_env)
    c.equal(w.stdout.strip(), os.path.join(fresh, f"usr/share/man/man1/{page}.1.gz"), f"man -w {page}")
    whatis = sh(["lexgrog", os.path.join(fresh, f"usr/share/man/man1/{page}.1.gz")]).stdout
    c.check(f': "{page} - ' in whatis,
            f"{page}: whatis reads its NAME line", whatis)

share = os.path.join(fresh, "usr/share")
bash = sh(["bash", "-c", ". /usr/share/bash-completion/bash_completion && __load_completion btfslim && complete -p btfslim"
           " && COMP_WORDS=(btfslim bud) COMP_CWORD=1 COMP_LINE='btfslim bud' COMP_POINT=11 && _btfslim btfslim bud btfslim"
           " && echo \"${COMPREPLY[*]}\""], env=dict(os.environ, XDG_DATA_DIRS=f"{share}:/usr/share"))
c.check(bash.returncode == 0 and "complete -F _btfslim btfslim" in bash.stdout and bash.stdout.strip().endswith("budget"),
        "bash-completion loads the packaged completion on demand, and it completes", bash.stdout + bash.stderr)
zsh = sh(["zsh", "-f", "-c", f"fpath=({share}/zsh/vendor-completions $fpath); autoload -Uz +X _btfslim && whence -w _btfslim"])
c.check(zsh.returncode == 0 and "_btfslim: function" in zsh.stdout, "zsh loads _btfslim from vendor-completions",
        zsh.stdout + zsh.stderr)
# fish loads a command's completions once the command is on PATH, as the package's /usr/bin/btfslim is.
fish = sh(["fish", "--no-config", "-c", f"set -p fish_complete_path {share}/fish/vendor_completions.d; complete -C 'btfslim bud'"],
          env=dict(os.environ, PATH=os.path.join(fresh, "usr/bin") + ":" + os.environ["PATH"]))
c.check(fish.returncode == 0 and fish.stdout.startswith("budget"), "fish loads the packaged completion",
        fish.stdout + fish.stderr)

# Nothing written into the checkout, nor beside it (where dpkg-buildpackage puts the package).
status = sh(["git", "-C", SOURCE_DIR, "status", "--porcelain", "--ignored", "--", "debian", "obj-*"])
c.equal(status.stdout, "", "nothing was written into the checkout's debian/ or an obj-* directory")
c.equal(sorted(n for n in set(os.listdir(os.path.dirname(SOURCE_DIR))) - beside if n.startswith("btfslim_")), [],
        "no package was written beside the checkout")

shutil.rmtree(root, ignore_errors=True)
sys.exit(c.finish())
