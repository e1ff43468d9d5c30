#!/usr/bin/env bash
# packaging_deb_test BUILD_DIR VERSION: builds gpuwarden_VERSION_amd64.deb and a "previous"
# 0.0.1 package (the same tree, version lowered, a different default config), then: dpkg -i
# old, doctor --demo from /usr/bin; upgrade with the config unedited (it follows the package);
# back to old, edit the conffile and add history, upgrade again (the edit and the history are
# kept, the new default beside it as .dpkg-dist), dpkg -r (binary gone, config and history
# kept), dpkg -P (all gone). The EXIT trap purges the package whatever happens.
set -euo pipefail
build=$1 version=$2 old=0.0.1
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (dpkg -i); CI runs tests as root"
if dpkg-query -W -f='${Status}' gpuwarden 2>/dev/null | grep -q installed; then
  fail "a gpuwarden package is already installed here; the test will not replace it"
fi
[[ ! -e /var/lib/gpuwarden && ! -e /etc/gpuwarden ]] ||
  fail "/var/lib/gpuwarden or /etc/gpuwarden exists already; the test would purge it"
tmp=$(mktemp -d /tmp/gw-deb.XXXXXX)
cleanup() {
  if [[ -n ${serve_pid:-} ]]; then kill "$serve_pid" 2>/dev/null || true; fi
  dpkg -P gpuwarden >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# The current package from the build tree; the "previous" one is the same tree repacked with
# its version lowered and its default config changed (a second cpack costs minutes on a loaded
# CI machine), so that the upgrade meets a conffile the package changed.
cpack --config "$build/CPackConfig.cmake" -B "$tmp/new" >"$tmp/cpack-new.log" 2>&1 ||
  { cat "$tmp/cpack-new.log"; fail "cpack (current version)"; }
new_deb=$tmp/new/gpuwarden_${version}_amd64.deb
old_deb=$tmp/old/gpuwarden_${old}_amd64.deb
[[ -f $new_deb ]] || { ls "$tmp/new"; fail "no $new_deb"; }
mkdir -p "$tmp/old"
dpkg-deb -R "$new_deb" "$tmp/old/tree"
sed -i "s/^Version: .*/Version: $old/" "$tmp/old/tree/DEBIAN/control"
conf=etc/gpuwarden/gpuwarden.toml
cp "$tmp/old/tree/$conf" "$tmp/new.toml"
sed -i '1i # gpuwarden 0.0.1 default configuration' "$tmp/old/tree/$conf"
cp "$tmp/old/tree/$conf" "$tmp/old.toml"
sed -i "s|^[0-9a-f]*  $conf\$|$(cd "$tmp/old/tree" && md5sum "$conf")|" "$tmp/old/tree/DEBIAN/md5sums"
dpkg-deb -Zgzip -z1 -b "$tmp/old/tree" "$old_deb" >/dev/null
[[ -f $old_deb ]] || { ls "$tmp/old"; fail "no $old_deb"; }

# Contents and control data, read from the archive itself.
dpkg-deb -c "$new_deb" >"$tmp/contents"
for f in ./usr/bin/gpuwarden ./usr/lib/systemd/system/gpuwarden.service \
  ./etc/gpuwarden/gpuwarden.toml ./usr/lib/gpuwarden/libnvidia-ml.so.1 \
  ./usr/lib/gpuwarden/gpuwarden-http.so \
  ./usr/share/gpuwarden/scenarios/demo.json ./usr/share/doc/gpuwarden/serve.md \
  ./usr/share/doc/gpuwarden/packaging.md ./usr/share/gpuwarden/grafana/gpuwarden-dashboard.json \
  ./usr/share/gpuwarden/prometheus/gpuwarden-rules.yml ./usr/share/gpuwarden/slurm/prolog.sh; do
  grep -q " $f\$" "$tmp/contents" || fail "$f missing from the package"
done
for f in ./usr/bin/gpuwarden ./usr/share/gpuwarden/slurm/prolog.sh; do
  grep -q "^-rwxr-xr-x root/root .* $f\$" "$tmp/contents" || fail "$f not 0755 root"
done
if grep -q "/var/lib/gpuwarden" "$tmp/contents"; then fail "state dir shipped (postinst makes it)"; fi
dpkg-deb -I "$new_deb" >"$tmp/info"
grep -q "^ Package: gpuwarden$" "$tmp/info" || fail "control: Package"
grep -q "^ Version: $version$" "$tmp/info" || fail "control: Version"
grep -q "^ Architecture: amd64$" "$tmp/info" || fail "control: Architecture"
grep -q "^ Depends: .*libc6" "$tmp/info" || fail "control: no shlibs Depends"
grep -q "^ Recommends: .*libcurl4" "$tmp/info" || fail "control: libcurl4 (dlopen'ed) not recommended"
grep -q "^ Depends: .*libsqlite3-0" "$tmp/info" || fail "control: libsqlite3-0 (dlopen'ed) not a dependency"
# Linking libcurl again would make every command load ~30 libraries at start (docs/alerts.md).
if readelf -d "$build/gpuwarden" | grep -q "NEEDED.*libcurl"; then fail "gpuwarden links libcurl"; fi
# The same for cpp-httplib (OpenSSL, brotli): serve, watch, check and the Slurm hooks bring it
# in their plugin, /usr/lib/gpuwarden/gpuwarden-http.so (src/cli/http_commands.h).
if readelf -d "$build/gpuwarden" | grep -Eq "NEEDED.*(httplib|libssl|libcrypto)"; then
  fail "gpuwarden links cpp-httplib or OpenSSL"
fi
# The C++ runtime, toml++ and pugixml are compiled into the binary (CMakeLists.txt), SQLite is
# opened at the first database: loaded at start, they cost every command ~2.5 ms. Sanitizer
# builds keep the shared runtime.
if ! readelf -d "$build/gpuwarden" | grep -Eq "NEEDED.*lib(asan|tsan)" &&
  readelf -d "$build/gpuwarden" | grep -Eq "NEEDED.*(libstdc\+\+|libgcc_s|libpugixml|libtomlplusplus|libsqlite)"; then
  fail "gpuwarden loads the C++ runtime, pugixml, toml++ or SQLite at start"
fi
readelf -d "$build/gpuwarden-http.so" | grep -q "NEEDED.*libcpp-httplib" ||
  fail "gpuwarden-http.so does not link cpp-httplib"
grep -q "^ Depends: .*libcpp-httplib" "$tmp/info" || fail "control: the plugin's libcpp-httplib"
[[ $(dpkg-deb -f "$new_deb" Version) == "$version" ]] || fail "version field"
[[ $(dpkg-deb -f "$old_deb" Version) == "$old" ]] || fail "old version field"
dpkg-deb -e "$new_deb" "$tmp/control"
[[ $(cat "$tmp/control/conffiles") == /etc/gpuwarden/gpuwarden.toml ]] || fail "conffiles"
if grep -Eq "systemctl (enable|start)|deb-systemd-helper enable" "$tmp/control/postinst"; then
  fail "postinst enables or starts the daemon"
fi

# Install the previous version; it runs from /usr/bin with its packaged demo data.
dpkg -i "$old_deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -i old"; }
[[ $(dpkg-query -W -f='${Version}' gpuwarden) == "$old" ]] || fail "old not installed"
[[ -d /var/lib/gpuwarden ]] || fail "postinst did not create /var/lib/gpuwarden"
/usr/bin/gpuwarden doctor --demo >"$tmp/doctor.txt" 2>&1 || rc=$?
[[ ${rc:-0} -le 2 ]] || { cat "$tmp/doctor.txt"; fail "doctor --demo exited ${rc}"; }
grep -q "GPU" "$tmp/doctor.txt" || { cat "$tmp/doctor.txt"; fail "doctor --demo printed no GPU"; }
/usr/bin/gpuwarden serve --check-config --config /etc/gpuwarden/gpuwarden.toml >"$tmp/check.txt" \
  2>&1 || { cat "$tmp/check.txt"; fail "the shipped config does not pass --check-config"; }
# --demo loads the packaged fake NVML, not the build tree's (the binary knows both paths).
/usr/bin/gpuwarden serve --demo --listen 127.0.0.1:0 --db "$tmp/demo.db" --kernel-log "" \
  >"$tmp/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 300); do
  grep -q " /usr/lib/gpuwarden/libnvidia-ml.so.1$" "/proc/$serve_pid/maps" 2>/dev/null && break
  sleep 0.1
done
grep -q " /usr/lib/gpuwarden/libnvidia-ml.so.1$" "/proc/$serve_pid/maps" 2>/dev/null ||
  { cat "$tmp/serve.log"; fail "serve --demo did not load /usr/lib/gpuwarden/libnvidia-ml.so.1"; }
kill "$serve_pid"
wait "$serve_pid" || true
if [[ -d /run/systemd/system ]] && systemctl is-active --quiet gpuwarden.service; then
  fail "the package started the daemon"
fi

# An unedited config follows the package on upgrade, without a question.
cmp -s /etc/gpuwarden/gpuwarden.toml "$tmp/old.toml" || fail "old package: not its own config"
dpkg -i "$new_deb" >"$tmp/dpkg.log" 2>&1 </dev/null || { cat "$tmp/dpkg.log"; fail "upgrade"; }
cmp -s /etc/gpuwarden/gpuwarden.toml "$tmp/new.toml" || fail "unedited config did not follow"
[[ ! -e /etc/gpuwarden/gpuwarden.toml.dpkg-dist ]] || fail "unedited config: .dpkg-dist made"
dpkg -i "$old_deb" >"$tmp/dpkg.log" 2>&1 </dev/null || { cat "$tmp/dpkg.log"; fail "downgrade"; }
cmp -s /etc/gpuwarden/gpuwarden.toml "$tmp/old.toml" || fail "downgrade: config did not follow"

# An admin's edit and some history, then the upgrade keeps both. dpkg asks when both the admin
# and the package changed the conffile; without a terminal, --force-confold answers "keep
# mine" (apt: -o Dpkg::Options::=--force-confold) and the new default lands in .dpkg-dist.
sed -i 's/^# interval = "1s"$/interval = "2s"  # edited by the admin/' /etc/gpuwarden/gpuwarden.toml
grep -q '^interval = "2s"' /etc/gpuwarden/gpuwarden.toml || fail "could not edit the config"
echo history >/var/lib/gpuwarden/history.db
cp /etc/gpuwarden/gpuwarden.toml "$tmp/edited.toml"
dpkg -i --force-confold "$new_deb" >"$tmp/dpkg.log" 2>&1 </dev/null ||
  { cat "$tmp/dpkg.log"; fail "upgrade"; }
[[ $(dpkg-query -W -f='${Version}' gpuwarden) == "$version" ]] || fail "not upgraded"
cmp -s /etc/gpuwarden/gpuwarden.toml "$tmp/edited.toml" || fail "upgrade lost the config edit"
cmp -s /etc/gpuwarden/gpuwarden.toml.dpkg-dist "$tmp/new.toml" || fail "no new default .dpkg-dist"
[[ $(cat /var/lib/gpuwarden/history.db) == history ]] || fail "upgrade lost the history"
/usr/bin/gpuwarden serve --check-config --config /etc/gpuwarden/gpuwarden.toml >"$tmp/check.txt" \
  2>&1 || { cat "$tmp/check.txt"; fail "the edited config does not pass --check-config"; }

# Remove: the program goes, the config and the history stay until purge.
dpkg -r gpuwarden >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -r"; }
[[ ! -e /usr/bin/gpuwarden && ! -e /usr/lib/gpuwarden ]] || fail "dpkg -r left the program"
[[ ! -e /usr/lib/systemd/system/gpuwarden.service ]] || fail "dpkg -r left the unit"
cmp -s /etc/gpuwarden/gpuwarden.toml "$tmp/edited.toml" || fail "dpkg -r lost the config"
[[ -f /var/lib/gpuwarden/history.db ]] || fail "dpkg -r lost the history"
[[ $(dpkg-query -W -f='${Status}' gpuwarden) == "deinstall ok config-files" ]] ||
  fail "after dpkg -r: $(dpkg-query -W -f='${Status}' gpuwarden)"

# Purge: nothing of gpuwarden is left.
dpkg -P gpuwarden >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; fail "dpkg -P"; }
[[ ! -e /etc/gpuwarden && ! -e /var/lib/gpuwarden ]] || fail "purge left /etc or /var/lib"
if dpkg-query -W gpuwarden >/dev/null 2>&1; then fail "dpkg still knows gpuwarden"; fi
echo "packaging_deb_test: ok ($new_deb, upgrade from $old)"
