#!/usr/bin/env bash
# A Java 21 for the bench on a Debian 12 (bookworm) machine whose only JDKs are 17 and 25.
#
# Neo4j 5.26 supports Java 17 and 21, and its Lucene computes vector distances with SIMD on Java 20-22 only
# (driftgraph/java.py). bookworm has no Java 21 package; trixie's openjdk-21-jre-headless needs glibc 2.38,
# so this unpacks it beside trixie's libc6, libgcc-s1 and zlib1g (apt-get download: no package is
# installed, nothing outside the target folder changes) and writes bin/java, which runs that JDK through
# trixie's own loader. Machines with a Java 21 package or JDK need none of this: set neo4j.launcher.java
# or JAVA_HOME.
#
#   bench/java21.sh [FOLDER]   (default bench/.cache/java21) -> prints FOLDER/bin/java
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-$here/.cache/java21}" && cd "${1:-$here/.cache/java21}" && pwd)"
if [ -x "$out/bin/java" ] && "$out/bin/java" -version >/dev/null 2>&1; then
  echo "$out/bin/java"
  exit 0
fi
apt_dir="$out/apt"
mkdir -p "$apt_dir/lists/partial" "$out/debs"
echo "deb http://deb.debian.org/debian trixie main" >"$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=-" -o "Dir::State::Lists=$apt_dir/lists")
apt-get "${apt_opts[@]}" -qq update
(cd "$out/debs" && apt-get "${apt_opts[@]}" -qq download openjdk-21-jre-headless libc6 libgcc-s1 zlib1g 2>/dev/null)
rm -rf "$out/root"
for deb in "$out"/debs/*.deb; do dpkg-deb -x "$deb" "$out/root"; done
jdk="$out/root/usr/lib/jvm/java-21-openjdk-amd64"
# the package's configuration lives under /etc (symlinks from the JDK's conf/ and lib/): bring it inside
while IFS= read -r link; do
  target="$(readlink "$link")"
  case "$target" in /etc/*) rm "$link" && { cp -r "$out/root$target" "$link" 2>/dev/null || true; } ;; esac
done < <(find "$jdk/conf" "$jdk/lib" -type l)
libs="$out/root/usr/lib/x86_64-linux-gnu"
mkdir -p "$out/bin"
cat >"$out/bin/java" <<EOF
#!/bin/sh
exec "$libs/ld-linux-x86-64.so.2" --library-path "$libs:$jdk/lib:$jdk/lib/server" "$jdk/bin/java" "\$@"
EOF
chmod +x "$out/bin/java"
"$out/bin/java" -version 2>&1 | head -1 >&2
echo "$out/bin/java"
