#!/usr/bin/env bash
# deploy/local/cluster.sh — build (cached) and run a real local Kubernetes control
# plane for policysched: etcd + kube-apiserver + KWOK fake nodes, all on 127.0.0.1.
# The reference kube-scheduler and kube-controller-manager are built too, but only started
# on request.
#
#   cluster.sh build [TARGET]        build (cached) TARGET: control-plane (etcd, kube-apiserver,
#                                    kube-scheduler, kube-controller-manager, kwok), cel-reference,
#                                    or all (the default)
#   cluster.sh up [--nodes N] [--controller-manager]
#                                    start etcd, kube-apiserver, kwok; create N fake nodes (default
#                                    3); --controller-manager: then start-controller-manager too
#   cluster.sh down                  stop everything started under $CLUSTER_DIR (TERM, then KILL)
#   cluster.sh status                show processes, ports, apiserver health, node readiness
#   cluster.sh smoke                 prove nodes Ready + nodeName pod + pods/binding pod Running
#   cluster.sh start-scheduler       start the reference kube-scheduler (not done by `up`)
#   cluster.sh start-controller-manager [--controllers LIST]
#                                    start kube-controller-manager with only the PersistentVolume
#                                    binder (default LIST: persistentvolume-binder)
#   cluster.sh restart-apiserver [--signal TERM|KILL] [--down SECONDS]   restart kube-apiserver only
#   cluster.sh path BINARY           print the cached path of etcd|kube-apiserver|kube-scheduler|
#                                    kube-controller-manager|kwok|cel-reference
#   cluster.sh env                   print shell exports (KUBECONFIG, ...) for the running cluster
#   cluster.sh pin-kube vX.Y.Z       regenerate deploy/local/kube/go.mod for another release
#
# Environment: POLICYSCHED_CACHE (default ~/.cache/policysched), CLUSTER_DIR (default
# <repo>/.cluster), GO (default /usr/local/go/bin/go, else `go` on PATH), GO_BUILD_JOBS
# (go build -p, default 1), GO_NICE (default 19), STOP_TIMEOUT (seconds, default 20),
# KWOK_NODE_LEASE_SECONDS (kwok --node-lease-duration-seconds, default 40; 0: no node
# leases — kwok v0.7.0 then heartbeats node status every ~10 min instead of every 20-25 s,
# which is what makes thousands of fake nodes affordable on a small machine, see bench/e2e.py).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CACHE="${POLICYSCHED_CACHE:-$HOME/.cache/policysched}"
CLUSTER_DIR="${CLUSTER_DIR:-$REPO/.cluster}"
if [[ -z "${GO:-}" ]]; then
  if [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go; else GO="$(command -v go || true)"; fi
fi
GO_BUILD_JOBS="${GO_BUILD_JOBS:-1}"
GO_NICE="${GO_NICE:-19}"
STOP_TIMEOUT="${STOP_TIMEOUT:-20}"
KWOK_NODE_LEASE_SECONDS="${KWOK_NODE_LEASE_SECONDS:-40}"
PYTHON="${PYTHON:-python3}"

# Versions are read from the committed wrapper modules (single source of truth).
# (prints the version of a module required in go.mod, in a require block or on one line)
required_version() { awk -v m="$2" '$1=="require" && $2==m {print $3; exit} $1==m && $2 ~ /^v/ {print $2; exit}' "$1"; }
KUBE_VERSION="$(required_version "$HERE/kube/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(required_version "$HERE/etcd/go.mod" go.etcd.io/etcd/server/v3)"
KWOK_VERSION="$(required_version "$HERE/kwok/go.mod" sigs.k8s.io/kwok)"
[[ -n "$KUBE_VERSION" && -n "$ETCD_VERSION" && -n "$KWOK_VERSION" ]] ||
  { echo "error: could not read pinned versions from $HERE/{kube,etcd,kwok}/go.mod" >&2; exit 1; }

# ---------------------------------------------------------------------------- helpers
log() { printf '%s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }
T_STEP=0
step() { T_STEP="$(now)"; log "==> $*"; }
done_step() { log "    done in $(elapsed "$T_STEP")${1:+ — $1}"; }

# A short content hash of a wrapper module (go.mod, go.sum, *.go; extra `find` tests after
# the directory narrow the files) plus the Go version: the cache key, so editing a pin (or
# upgrading Go) triggers a rebuild, nothing else does.
module_key() {
  local dir="$1"; shift
  { "$GO" env GOVERSION; cd "$dir" && find . -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) "$@" | LC_ALL=C sort | xargs cat; } |
    sha256sum | cut -c1-10
}

# The kube wrapper module also holds cmd/kube-controller-manager and cmd/cel-reference (the
# CEL reference evaluator of the differential test): each binary directory's key covers only
# its own sources (and the shared go.mod/go.sum), so editing one never rebuilds another.
KUBE_BIN_DIR="" KCM_BIN_DIR="" ETCD_BIN_DIR="" KWOK_BIN_DIR="" CEL_REFERENCE_BIN_DIR=""
resolve_bin_dirs() {
  [[ -n "$GO" && -x "$GO" ]] || die "Go not found (set GO=/path/to/go)"
  KUBE_BIN_DIR="$CACHE/bin/kube-$KUBE_VERSION-$(module_key "$HERE/kube" -not -path './cmd/cel-reference/*' -not -path './cmd/kube-controller-manager/*')"
  KCM_BIN_DIR="$CACHE/bin/kube-controller-manager-$KUBE_VERSION-$(module_key "$HERE/kube" -not -path './cmd/cel-reference/*' -not -path './cmd/kube-apiserver/*' -not -path './cmd/kube-scheduler/*')"
  CEL_REFERENCE_BIN_DIR="$CACHE/bin/cel-reference-$KUBE_VERSION-$(module_key "$HERE/kube" -not -path './cmd/kube-*')"
  ETCD_BIN_DIR="$CACHE/bin/etcd-$ETCD_VERSION-$(module_key "$HERE/etcd")"
  KWOK_BIN_DIR="$CACHE/bin/kwok-$KWOK_VERSION-$(module_key "$HERE/kwok")"
}

bin_path() {
  case "$1" in
    kube-apiserver | kube-scheduler) echo "$KUBE_BIN_DIR/$1" ;;
    kube-controller-manager) echo "$KCM_BIN_DIR/$1" ;;
    etcd) echo "$ETCD_BIN_DIR/etcd" ;;
    kwok) echo "$KWOK_BIN_DIR/kwok" ;;
    cel-reference) echo "$CEL_REFERENCE_BIN_DIR/cel-reference" ;;
    *) die "unknown binary $1" ;;
  esac
}

go_env() {
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
  export GOMODCACHE="$CACHE/gomod" GOCACHE="$CACHE/gocache"
  # Modules come from Go's own GOPROXY setting (`go env GOPROXY`): the environment decides.
  # The wrappers' go.sum files are committed and complete, so a build never needs the
  # checksum database. It is only consulted when go.sum must grow (pin-kube, go get).
}

# Only for commands that add modules to a go.sum: if the checksum database Go is configured
# with (`go env GOSUMDB`: "name[+key] [url]") is unreachable (this machine reaches the module
# proxy only), turn it off.
sumdb_fallback() {
  [[ -z "${GOSUMDB:-}" ]] || return 0
  local db url
  db="$("$GO" env GOSUMDB)"
  [[ -n "$db" && "$db" != off ]] || return 0
  if [[ "$db" == *" "* ]]; then url="${db#* }"; else url="https://${db%%+*}"; fi
  if ! curl -sS -m 10 -o /dev/null "$url/lookup/golang.org/x/text@v0.3.0" 2>/dev/null; then
    log "    note: checksum database ${db%%[+ ]*} unreachable — GOSUMDB=off for this go.sum update (hashes then come from the proxy only)"
    export GOSUMDB=off
  fi
}

# Read Origin.Hash / Time from a module's .info in the module cache (downloaded on demand).
mod_info() { # wrapper-dir module version field
  local info="$GOMODCACHE/cache/download/$2/@v/$3.info"
  [[ -f "$info" ]] || (cd "$1" && "$GO" mod download "$2" >/dev/null 2>&1) || true
  [[ -f "$info" ]] || return 0
  sed -n "s/.*\"$4\": *\"\([^\"]*\)\".*/\1/p" "$info" | head -1
}

# -X flags stamping the Kubernetes release into component-base and client-go (what
# `--version` and the User-Agent report).
kube_ldflags() {
  local v="${KUBE_VERSION#v}" commit date pkg ldf=""
  commit="$(mod_info "$HERE/kube" k8s.io/kubernetes "$KUBE_VERSION" Hash)"
  date="$(mod_info "$HERE/kube" k8s.io/kubernetes "$KUBE_VERSION" Time)"; date="${date:-1970-01-01T00:00:00Z}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=${v%%.*} -X $pkg.gitMinor=$(cut -d. -f2 <<<"$v")"
    ldf+=" -X $pkg.gitCommit=${commit} -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  echo "$ldf"
}

go_build() { # module-dir output-dir package...
  local mod="$1" out="$2" ldflags="$3"; shift 3
  (cd "$mod" && nice -n "$GO_NICE" "$GO" build -p "$GO_BUILD_JOBS" -trimpath -ldflags "$ldflags" -o "$out/" "$@")
}

# ---------------------------------------------------------------------------- build
cmd_build() {
  local target="${1:-all}"
  case "$target" in
    all) build_control_plane; build_cel_reference ;;
    control-plane) build_control_plane ;;
    cel-reference) build_cel_reference ;;
    *) die "unknown build target $target (all, control-plane, cel-reference)" ;;
  esac
}

# cel-reference: Kubernetes' CEL environment (k8s.io/apiserver/pkg/cel/environment at the
# pinned release) as a line-oriented evaluator, see kube/cmd/cel-reference/main.go. Built
# with -mod=readonly: it needs no module beyond those kube-apiserver already pins, and must
# not rewrite go.mod (that would change the control plane's cache key).
build_cel_reference() {
  resolve_bin_dirs
  go_env
  mkdir -p "$CACHE/bin"
  if [[ -x "$CEL_REFERENCE_BIN_DIR/cel-reference" ]]; then
    log "==> cel-reference: cached in $CEL_REFERENCE_BIN_DIR"
    return 0
  fi
  local tmp="$CEL_REFERENCE_BIN_DIR.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
  step "go build cel-reference (k8s.io/apiserver CEL of $KUBE_VERSION)"
  GOFLAGS=-mod=readonly go_build "$HERE/kube" "$tmp" "-s -w" ./cmd/cel-reference
  done_step "$(du -h "$tmp/cel-reference" | cut -f1)"
  rm -rf "$CEL_REFERENCE_BIN_DIR"; mv "$tmp" "$CEL_REFERENCE_BIN_DIR"
}

build_control_plane() {
  resolve_bin_dirs
  go_env
  mkdir -p "$CACHE/bin"
  local t_all; t_all="$(now)"
  log "policysched local control plane: kubernetes $KUBE_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION ($("$GO" env GOVERSION), -p $GO_BUILD_JOBS, nice $GO_NICE)"
  log "cache: $CACHE"
  local built=0

  # --- kube-apiserver + kube-scheduler
  if [[ -x "$KUBE_BIN_DIR/kube-apiserver" && -x "$KUBE_BIN_DIR/kube-scheduler" ]]; then
    log "==> kube-apiserver, kube-scheduler: cached in $KUBE_BIN_DIR"
  else
    local tmp="$KUBE_BIN_DIR.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
    step "download modules for k8s.io/kubernetes $KUBE_VERSION"
    (cd "$HERE/kube" && nice -n "$GO_NICE" "$GO" mod download k8s.io/kubernetes && nice -n "$GO_NICE" "$GO" list -deps ./... >/dev/null)
    done_step
    local b ldf; ldf="$(kube_ldflags)"
    for b in kube-apiserver kube-scheduler; do
      step "go build $b ($KUBE_VERSION)"
      go_build "$HERE/kube" "$tmp" "-s -w$ldf" "./cmd/$b"
      done_step "$(du -h "$tmp/$b" | cut -f1)"
    done
    rm -rf "$KUBE_BIN_DIR"; mv "$tmp" "$KUBE_BIN_DIR"; built=1
  fi

  # --- kube-controller-manager (its own directory and key: editing its main rebuilds nothing else)
  if [[ -x "$KCM_BIN_DIR/kube-controller-manager" ]]; then
    log "==> kube-controller-manager: cached in $KCM_BIN_DIR"
  else
    local tmp="$KCM_BIN_DIR.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
    step "download modules for kube-controller-manager $KUBE_VERSION"
    (cd "$HERE/kube" && nice -n "$GO_NICE" "$GO" list -deps ./cmd/kube-controller-manager >/dev/null)
    done_step
    step "go build kube-controller-manager ($KUBE_VERSION)"
    go_build "$HERE/kube" "$tmp" "-s -w$(kube_ldflags)" ./cmd/kube-controller-manager
    done_step "$(du -h "$tmp/kube-controller-manager" | cut -f1)"
    rm -rf "$KCM_BIN_DIR"; mv "$tmp" "$KCM_BIN_DIR"; built=1
  fi

  # --- etcd
  if [[ -x "$ETCD_BIN_DIR/etcd" ]]; then
    log "==> etcd: cached in $ETCD_BIN_DIR"
  else
    local tmp="$ETCD_BIN_DIR.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
    step "download modules for etcd $ETCD_VERSION"
    (cd "$HERE/etcd" && nice -n "$GO_NICE" "$GO" list -deps ./... >/dev/null)
    done_step
    local sha; sha="$(mod_info "$HERE/etcd" go.etcd.io/etcd/server/v3 "$ETCD_VERSION" Hash)"
    step "go build etcd ($ETCD_VERSION)"
    # (the proxy's .info for etcd carries no commit; fall back to the module version)
    go_build "$HERE/etcd" "$tmp" "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${sha:-$ETCD_VERSION}" .
    done_step "$(du -h "$tmp/etcd" | cut -f1)"
    rm -rf "$ETCD_BIN_DIR"; mv "$tmp" "$ETCD_BIN_DIR"; built=1
  fi

  # --- kwok (a `tool` of the kwok wrapper module: built from sigs.k8s.io/kwok/cmd/kwok
  #     with the dependency versions pinned in deploy/local/kwok/go.sum)
  if [[ -x "$KWOK_BIN_DIR/kwok" ]]; then
    log "==> kwok: cached in $KWOK_BIN_DIR"
  else
    local tmp="$KWOK_BIN_DIR.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
    step "download modules for kwok $KWOK_VERSION"
    (cd "$HERE/kwok" && nice -n "$GO_NICE" "$GO" list -deps sigs.k8s.io/kwok/cmd/kwok >/dev/null)
    done_step
    step "go build kwok ($KWOK_VERSION)"
    go_build "$HERE/kwok" "$tmp" "-s -w" sigs.k8s.io/kwok/cmd/kwok
    done_step "$(du -h "$tmp/kwok" | cut -f1)"
    rm -rf "$KWOK_BIN_DIR"; mv "$tmp" "$KWOK_BIN_DIR"; built=1
  fi

  if ((built == 0)); then log "build: all binaries cached ($(elapsed "$t_all"))"; return 0; fi
  log "build: done in $(elapsed "$t_all"); cache size: $(du -sh "$CACHE" 2>/dev/null | cut -f1)" \
    "(modules $(du -sh "$CACHE/gomod" 2>/dev/null | cut -f1), build cache $(du -sh "$CACHE/gocache" 2>/dev/null | cut -f1), binaries $(du -sh "$CACHE/bin" 2>/dev/null | cut -f1))"
}

# Regenerate kube/go.mod for another k8s.io/kubernetes release: the replace block maps
# every staging module listed in that release's own go.mod to its published v0.Y.Z.
cmd_pin_kube() {
  local ver="${1:-}"; [[ "$ver" =~ ^v1\.[0-9]+\.[0-9]+$ ]] || die "usage: pin-kube v1.Y.Z"
  [[ -n "$GO" && -x "$GO" ]] || die "Go not found"
  go_env; sumdb_fallback
  local modfile staging
  modfile="$(cd /tmp && "$GO" mod download -json "k8s.io/kubernetes@$ver" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
  [[ -f "$modfile" ]] || die "could not download k8s.io/kubernetes@$ver go.mod"
  staging="$(sed -n '/^replace (/,/^)/p' "$modfile" | awk '$2=="=>" && $3 ~ /^\.\/staging\// {print $1}')"
  [[ -n "$staging" ]] || die "no staging replaces in $modfile"
  local gover godebug
  gover="$(awk '$1=="go" {print $2; exit}' "$modfile")"
  godebug="$(awk '$1=="godebug" {print; exit}' "$modfile")"
  {
    echo "// Wrapper module: builds kube-apiserver, kube-scheduler and kube-controller-manager from k8s.io/kubernetes $ver"
    echo "// using the published staging modules (regenerate with: deploy/local/cluster.sh pin-kube vX.Y.Z)."
    echo "module policysched.local/kube"
    echo
    echo "go $gover"
    [[ -n "$godebug" ]] && { echo; echo "$godebug"; }
    echo
    echo "require k8s.io/kubernetes $ver"
    echo
    echo "replace ("
    local m; for m in $staging; do printf '\t%s => %s v0.%s\n' "$m" "$m" "${ver#v1.}"; done
    echo ")"
  } >"$HERE/kube/go.mod"
  rm -f "$HERE/kube/go.sum"
  (cd "$HERE/kube" && nice -n "$GO_NICE" "$GO" mod tidy)
  log "pinned k8s.io/kubernetes $ver ($(wc -l <<<"$staging") staging modules) in $HERE/kube/go.mod"
}

# ---------------------------------------------------------------------------- processes
# A pid file is trusted only if that process's command line mentions $CLUSTER_DIR (every
# process we start has its data dir / kubeconfig / config there), so a stale pid file
# can never make `down` signal an unrelated process that reused the pid.
pid_of() { # name -> pid if alive and ours
  local f="$CLUSTER_DIR/$1.pid" pid
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qF -- "$CLUSTER_DIR" || return 1
  echo "$pid"
}

start_daemon() { # name binary args...
  local name="$1"; shift
  # setsid: own session, so a Ctrl-C in the calling terminal doesn't reach the daemons.
  nohup setsid "$@" </dev/null >"$CLUSTER_DIR/$name.log" 2>&1 &
  echo $! >"$CLUSTER_DIR/$name.pid"
}

stop_daemon() { # name
  local name="$1" pid i
  if ! pid="$(pid_of "$name")"; then rm -f "$CLUSTER_DIR/$name.pid"; return 0; fi
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    [[ -d "/proc/$pid" ]] && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] || break
    sleep 0.1
  done
  if [[ -d "/proc/$pid" ]] && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]]; then
    log "    $name (pid $pid) ignored TERM for ${STOP_TIMEOUT}s — sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do [[ -d "/proc/$pid" ]] || break; sleep 0.1; done
  else
    log "    stopped $name (pid $pid)"
  fi
  rm -f "$CLUSTER_DIR/$name.pid"
}

free_ports() { # count -> space-separated free loopback ports
  "$PYTHON" - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
EOF
}

# A port picked at `up` for a daemon started later (kube-scheduler, kube-controller-manager)
# may since have been taken by another process (a daemon of another cluster on the machine):
# then another is picked now and written to cluster.env. $1 names the variable.
claim_port() {
  local var="$1"
  "$PYTHON" - "${!var}" <<'EOF' && return 0
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
  local port; port="$(free_ports 1)"
  [[ "$port" =~ ^[0-9]+$ ]] || die "could not pick a free loopback port for $var"
  log "    $var ${!var} is taken since up: $port instead (cluster.env updated)"
  sed -i "s/^$var=.*/$var='$port'/" "$CLUSTER_DIR/cluster.env"
  printf -v "$var" '%s' "$port"
}

wait_for() { # description timeout-seconds pid-name command...
  local what="$1" timeout="$2" name="$3"; shift 3
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    # (one more look before giving up: a process caught in the middle of an exec — nohup →
    # setsid → binary — briefly has an empty /proc/<pid>/cmdline, so pid_of misses it)
    pid_of "$name" >/dev/null || { sleep 0.2; pid_of "$name" >/dev/null; } || { tail -n 30 "$CLUSTER_DIR/$name.log" >&2; die "$name exited while waiting for $what (log: $CLUSTER_DIR/$name.log)"; }
    ((SECONDS < deadline)) || { tail -n 30 "$CLUSTER_DIR/$name.log" >&2; die "timed out after ${timeout}s waiting for $what"; }
    sleep 0.2
  done
}

load_env() {
  [[ -f "$CLUSTER_DIR/cluster.env" ]] || die "no cluster at $CLUSTER_DIR (run: $0 up)"
  # shellcheck disable=SC1091
  source "$CLUSTER_DIR/cluster.env"
}

# ---------------------------------------------------------------------------- certs
gen_pki() {
  local pki="$CLUSTER_DIR/pki"
  rm -rf "$pki"; mkdir -p "$pki"; chmod 700 "$pki"
  cat >"$pki/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = policysched-local-ca
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[serving]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, IP:10.0.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
authorityKeyIdentifier = keyid
EOF
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -config openssl.cnf -extensions ca 2>/dev/null
    openssl req -new -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj /CN=kube-apiserver 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt \
      -days 365 -extfile openssl.cnf -extensions serving 2>/dev/null
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f apiserver.csr ca.srl
    chmod 600 ./*.key
  )
  ADMIN_TOKEN="$(openssl rand -hex 24)"
  # token,user,uid,"group1,group2"
  printf '%s,admin,admin,"system:masters"\n' "$ADMIN_TOKEN" >"$pki/tokens.csv"
  chmod 600 "$pki/tokens.csv"
}

write_kubeconfig() {
  local ca_data; ca_data="$(base64 -w0 <"$CLUSTER_DIR/pki/ca.crt")"
  umask 077
  cat >"$CLUSTER_DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: policysched-local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $ca_data
users:
- name: admin
  user:
    token: $ADMIN_TOKEN
contexts:
- name: policysched-local
  context:
    cluster: policysched-local
    user: admin
current-context: policysched-local
EOF
  umask 022
  # kube-scheduler ignores --kubeconfig when --config is given: render the config
  # with the absolute kubeconfig path.
  sed "s|^\(  kubeconfig:\).*|\1 $CLUSTER_DIR/kubeconfig|" "$HERE/kube-scheduler-config.yaml" \
    >"$CLUSTER_DIR/kube-scheduler-config.yaml"
}

# ---------------------------------------------------------------------------- up / down
# kube-apiserver on the ports, PKI and etcd of $CLUSTER_DIR (cluster.env loaded); returns
# once /readyz answers.
start_apiserver() {
  local pki="$CLUSTER_DIR/pki"
  # kube-controller-manager runs, if at all, with only the PersistentVolume binder, hence:
  #  - ServiceAccount admission off (nothing creates the `default` ServiceAccount);
  #  - TaintNodesByCondition admission off (it puts node.kubernetes.io/not-ready:NoSchedule
  #    on every new Node, and only the node-lifecycle controller would ever remove it);
  #  - endpoint reconciler off (it would try to publish 127.0.0.1 as the `kubernetes`
  #    Service endpoint, which validation rejects for loopback addresses).
  # APF and the inflight limits are off so benchmark clients are never throttled. On SIGTERM,
  # open watches are ended after 2 s (by default they hold the shutdown for a minute).
  start_daemon kube-apiserver "$(bin_path kube-apiserver)" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 \
    --advertise-address 127.0.0.1 \
    --secure-port "$APISERVER_PORT" \
    --cert-dir "$pki" \
    --tls-cert-file "$pki/apiserver.crt" \
    --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --token-auth-file "$pki/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --allow-privileged=true \
    --disable-admission-plugins ServiceAccount,TaintNodesByCondition \
    --endpoint-reconciler-type none \
    --enable-priority-and-fairness=false \
    --max-requests-inflight 0 \
    --max-mutating-requests-inflight 0 \
    --shutdown-watch-termination-grace-period 2s
  wait_for "kube-apiserver /readyz" 180 kube-apiserver \
    curl -sf --cacert "$pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "$APISERVER_URL/readyz"
}

cmd_up() {
  local nodes=3 controller_manager=0
  while (($#)); do
    case "$1" in
      --nodes) nodes="${2:?--nodes needs a number}"; shift 2 ;;
      --nodes=*) nodes="${1#*=}"; shift ;;
      --controller-manager) controller_manager=1; shift ;;
      *) die "unknown option for up: $1" ;;
    esac
  done
  [[ "$nodes" =~ ^[0-9]+$ ]] || die "--nodes must be a number"
  command -v openssl >/dev/null || die "openssl is required"
  command -v curl >/dev/null || die "curl is required"
  local t_up n; t_up="$(now)"
  for n in etcd kube-apiserver kwok; do
    if pid_of "$n" >/dev/null; then die "$n is already running (pid $(pid_of "$n")); run: $0 down"; fi
  done

  local t_build; t_build="$(now)"
  log "==> build (cached)"
  build_control_plane
  log "    done in $(elapsed "$t_build")"

  # If any later step fails, stop whatever this `up` already started.
  trap 'rc=$?; if ((rc != 0)); then log "up failed (exit $rc) — stopping what was started"; cmd_down; fi' EXIT

  step "prepare $CLUSTER_DIR (certs, token, ports)"
  mkdir -p "$CLUSTER_DIR"
  rm -rf "$CLUSTER_DIR/etcd-data" "$CLUSTER_DIR"/*.log "$CLUSTER_DIR"/*.pid "$CLUSTER_DIR/cluster.env"
  gen_pki
  read -r ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KWOK_PORT SCHEDULER_PORT CONTROLLER_MANAGER_PORT <<<"$(free_ports 6 || true)"
  [[ "${CONTROLLER_MANAGER_PORT:-}" =~ ^[0-9]+$ ]] || die "could not pick free loopback ports (is $PYTHON working?)"
  APISERVER_URL="https://127.0.0.1:$APISERVER_PORT"
  write_kubeconfig
  cat >"$CLUSTER_DIR/cluster.env" <<EOF
# written by deploy/local/cluster.sh up — source it, or use KUBECONFIG
CLUSTER_DIR='$CLUSTER_DIR'
KUBECONFIG='$CLUSTER_DIR/kubeconfig'
APISERVER_URL='$APISERVER_URL'
ADMIN_TOKEN='$ADMIN_TOKEN'
CA_CERT='$CLUSTER_DIR/pki/ca.crt'
ETCD_URL='http://127.0.0.1:$ETCD_PORT'
ETCD_PORT='$ETCD_PORT'
ETCD_PEER_PORT='$ETCD_PEER_PORT'
APISERVER_PORT='$APISERVER_PORT'
KWOK_PORT='$KWOK_PORT'
SCHEDULER_PORT='$SCHEDULER_PORT'
CONTROLLER_MANAGER_PORT='$CONTROLLER_MANAGER_PORT'
KUBE_VERSION='$KUBE_VERSION'
ETCD_VERSION='$ETCD_VERSION'
KWOK_VERSION='$KWOK_VERSION'
ETCD_BIN='$(bin_path etcd)'
KUBE_APISERVER_BIN='$(bin_path kube-apiserver)'
KUBE_SCHEDULER_BIN='$(bin_path kube-scheduler)'
KUBE_CONTROLLER_MANAGER_BIN='$(bin_path kube-controller-manager)'
KWOK_BIN='$(bin_path kwok)'
KUBE_SCHEDULER_CONFIG='$CLUSTER_DIR/kube-scheduler-config.yaml'
EOF
  chmod 600 "$CLUSTER_DIR/cluster.env"
  done_step "etcd :$ETCD_PORT, apiserver :$APISERVER_PORT, kwok :$KWOK_PORT"

  step "start etcd $ETCD_VERSION"
  local etcd_bin etcd_extra=()
  etcd_bin="$(bin_path etcd)"
  if "$etcd_bin" --help 2>&1 | grep -q -- '--unsafe-no-fsync'; then etcd_extra+=(--unsafe-no-fsync); fi
  start_daemon etcd "$etcd_bin" \
    --name policysched \
    --data-dir "$CLUSTER_DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "policysched=http://127.0.0.1:$ETCD_PEER_PORT" \
    --quota-backend-bytes $((8 * 1024 * 1024 * 1024)) \
    --log-level warn \
    "${etcd_extra[@]}"
  wait_for "etcd /health" 60 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"
  done_step "pid $(pid_of etcd)${etcd_extra:+, ${etcd_extra[*]}}"

  step "start kube-apiserver $KUBE_VERSION"
  start_apiserver
  done_step "pid $(pid_of kube-apiserver), $APISERVER_URL"

  step "start kwok $KWOK_VERSION"
  start_daemon kwok "$(bin_path kwok)" \
    --kubeconfig "$CLUSTER_DIR/kubeconfig" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --node-ip 127.0.0.1 \
    --cidr 10.244.0.1/16 \
    --node-lease-duration-seconds "$KWOK_NODE_LEASE_SECONDS" \
    --server-address "127.0.0.1:$KWOK_PORT"
  wait_for "kwok /healthz" 60 kwok curl -sf "http://127.0.0.1:$KWOK_PORT/healthz"
  done_step "pid $(pid_of kwok)"

  step "create $nodes fake nodes (4 CPU, 32Gi, 110 pods, zones a/b/c)"
  if ((nodes > 0)); then
    CLUSTER_DIR="$CLUSTER_DIR" "$PYTHON" "$HERE/kapi.py" create-nodes "$nodes" >&2
    CLUSTER_DIR="$CLUSTER_DIR" "$PYTHON" "$HERE/kapi.py" wait-nodes-ready "$nodes" --timeout $((60 + nodes / 20)) >&2
  fi
  done_step

  ((controller_manager == 0)) || cmd_start_controller_manager

  trap - EXIT
  log "up: cluster ready in $(elapsed "$t_up")"
  log "    export KUBECONFIG=$CLUSTER_DIR/kubeconfig      (or: source $CLUSTER_DIR/cluster.env)"
  log "    reference scheduler: $0 start-scheduler   (binary: $(bin_path kube-scheduler))"
  ((controller_manager == 1)) ||
    log "    PV controller: $0 start-controller-manager   (binary: $(bin_path kube-controller-manager))"
}

# kube-controller-manager with only the controllers volume binding needs: the
# PersistentVolume binder (binds PVCs to PVs, honours volume.kubernetes.io/selected-node
# for WaitForFirstConsumer claims, provisions nothing without an external provisioner). It
# uses the admin kubeconfig (--use-service-account-credentials stays false, so no
# ServiceAccount tokens are needed), no cloud provider, no leader election.
cmd_start_controller_manager() {
  local controllers=persistentvolume-binder
  while (($#)); do
    case "$1" in
      --controllers) controllers="${2:?--controllers needs a list}"; shift 2 ;;
      --controllers=*) controllers="${1#*=}"; shift ;;
      *) die "unknown option for start-controller-manager: $1" ;;
    esac
  done
  load_env
  pid_of kube-controller-manager >/dev/null && die "kube-controller-manager already running (pid $(pid_of kube-controller-manager))"
  [[ -x "${KUBE_CONTROLLER_MANAGER_BIN:-}" ]] || die "no kube-controller-manager binary (run: $0 build control-plane, then $0 up)"
  # --pvclaimbinder-sync-period 1s (default 15s): binding a claim that names its volume, the
  # binder's claim worker and volume worker both write the volume's Bound phase; the loser
  # gets a conflict and the claim stays Pending until the next resync (seen: 13–30 s).
  step "start kube-controller-manager $KUBE_VERSION (controllers: $controllers)"
  claim_port CONTROLLER_MANAGER_PORT
  start_daemon kube-controller-manager "$KUBE_CONTROLLER_MANAGER_BIN" \
    --kubeconfig "$KUBECONFIG" \
    --authentication-kubeconfig "$KUBECONFIG" \
    --authorization-kubeconfig "$KUBECONFIG" \
    --controllers "$controllers" \
    --leader-elect=false \
    --pvclaimbinder-sync-period 1s \
    --bind-address 127.0.0.1 \
    --secure-port "$CONTROLLER_MANAGER_PORT"
  wait_for "kube-controller-manager /healthz" 60 kube-controller-manager \
    curl -skf "https://127.0.0.1:$CONTROLLER_MANAGER_PORT/healthz"
  done_step "pid $(pid_of kube-controller-manager), healthz https://127.0.0.1:$CONTROLLER_MANAGER_PORT/healthz"
}

cmd_start_scheduler() {
  load_env
  pid_of kube-scheduler >/dev/null && die "kube-scheduler already running (pid $(pid_of kube-scheduler))"
  step "start reference kube-scheduler $KUBE_VERSION"
  claim_port SCHEDULER_PORT
  start_daemon kube-scheduler "$KUBE_SCHEDULER_BIN" \
    --config "$KUBE_SCHEDULER_CONFIG" \
    --authentication-kubeconfig "$KUBECONFIG" \
    --authorization-kubeconfig "$KUBECONFIG" \
    --bind-address 127.0.0.1 \
    --secure-port "$SCHEDULER_PORT" \
    "$@"
  wait_for "kube-scheduler /healthz" 60 kube-scheduler curl -skf "https://127.0.0.1:$SCHEDULER_PORT/healthz"
  done_step "pid $(pid_of kube-scheduler), healthz https://127.0.0.1:$SCHEDULER_PORT/healthz"
}

# Restart only kube-apiserver (etcd keeps the data, clients reconnect): stop it with SIGTERM
# (graceful) or --signal KILL, optionally stay down for --down SECONDS, start it again.
cmd_restart_apiserver() {
  local sig=TERM down=0 pid i
  while (($#)); do
    case "$1" in
      --signal) sig="${2:?--signal needs TERM or KILL}"; shift 2 ;;
      --down) down="${2:?--down needs seconds}"; shift 2 ;;
      *) die "unknown option for restart-apiserver: $1" ;;
    esac
  done
  [[ "$sig" == TERM || "$sig" == KILL ]] || die "--signal must be TERM or KILL"
  load_env
  resolve_bin_dirs
  pid="$(pid_of kube-apiserver)" || die "kube-apiserver is not running under $CLUSTER_DIR"
  step "restart kube-apiserver (SIG$sig, down ${down}s)"
  kill "-$sig" "$pid"
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    [[ -d "/proc/$pid" ]] && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] || break
    sleep 0.1
  done
  if ((i >= STOP_TIMEOUT * 10)); then
    # a graceful shutdown that does not end (seen once in CI; its log tells why): what the
    # restart is for is a restart, so it ends with SIGKILL, said on stderr with the log
    echo "warning: kube-apiserver (pid $pid) still running ${STOP_TIMEOUT}s after SIG$sig:" \
      "SIGKILL; the end of its log:" >&2
    tail -n 40 "$CLUSTER_DIR/kube-apiserver.log" >&2 || true
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      [[ -d "/proc/$pid" ]] && [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]] || break
      sleep 0.1
    done
    ((i < 50)) || die "kube-apiserver (pid $pid) still running after SIGKILL"
  fi
  sleep "$down"
  # The port was picked from the ephemeral range: while it is free, a client reconnecting
  # to it can be given it as its own source port (a TCP self-connection) for a moment.
  local attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    if (start_apiserver 2>/dev/null); then break; fi
    grep -q "address already in use" "$CLUSTER_DIR/kube-apiserver.log" && ((attempt < 10)) ||
      { tail -n 30 "$CLUSTER_DIR/kube-apiserver.log" >&2; die "kube-apiserver did not start again"; }
    sleep 0.5
  done
  done_step "pid $(pid_of kube-apiserver), started at attempt $attempt"
}

cmd_down() {
  local t; t="$(now)"
  [[ -d "$CLUSTER_DIR" ]] || { log "down: nothing at $CLUSTER_DIR"; return 0; }
  log "==> stopping processes under $CLUSTER_DIR"
  # Anything else a benchmark registered as $CLUSTER_DIR/<name>.pid goes first, then the
  # control plane from the top down.
  local f name
  for f in "$CLUSTER_DIR"/*.pid; do
    [[ -e "$f" ]] || continue
    name="$(basename "$f" .pid)"
    case "$name" in etcd | kube-apiserver | kwok) ;; *) stop_daemon "$name" ;; esac
  done
  for name in kwok kube-apiserver etcd; do stop_daemon "$name"; done
  log "down: done in $(elapsed "$t")"
}

cmd_status() {
  local name pid rc=0
  [[ -d "$CLUSTER_DIR" ]] || { log "no cluster dir $CLUSTER_DIR"; return 1; }
  for name in etcd kube-apiserver kwok kube-scheduler kube-controller-manager; do
    if pid="$(pid_of "$name")"; then
      printf '%-23s running  pid %s\n' "$name" "$pid"
    else
      printf '%-23s stopped\n' "$name"
      [[ "$name" == kube-scheduler || "$name" == kube-controller-manager ]] || rc=1
    fi
  done
  if [[ -f "$CLUSTER_DIR/cluster.env" ]]; then
    load_env
    pid_of kube-apiserver >/dev/null || log "(not running; last run's settings:)"
    printf '%-15s %s\n' versions "kubernetes $KUBE_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION"
    printf '%-15s %s\n' apiserver "$APISERVER_URL"
    printf '%-15s %s\n' etcd "$ETCD_URL"
    printf '%-15s %s\n' kubeconfig "$KUBECONFIG"
    if pid_of kube-apiserver >/dev/null; then
      printf '%-15s %s\n' readyz "$(curl -s --cacert "$CA_CERT" -H "Authorization: Bearer $ADMIN_TOKEN" "$APISERVER_URL/readyz" || echo unreachable)"
      curl -s --cacert "$CA_CERT" -H "Authorization: Bearer $ADMIN_TOKEN" "$APISERVER_URL/api/v1/nodes?labelSelector=type%3Dkwok" |
        "$PYTHON" -c 'import json,sys
items = json.load(sys.stdin).get("items", [])
ready = sum(1 for n in items for c in n["status"].get("conditions", []) if c["type"] == "Ready" and c["status"] == "True")
print("%-15s %d kwok nodes, %d Ready" % ("nodes", len(items), ready))' || true
    fi
  fi
  return $rc
}

cmd_env() {
  load_env
  echo "export KUBECONFIG='$KUBECONFIG'"
  echo "export CLUSTER_DIR='$CLUSTER_DIR'"
  echo "export APISERVER_URL='$APISERVER_URL'"
  echo "export KUBE_SCHEDULER_BIN='$KUBE_SCHEDULER_BIN'"
  echo "export KUBE_SCHEDULER_CONFIG='$KUBE_SCHEDULER_CONFIG'"
  echo "export KUBE_CONTROLLER_MANAGER_BIN='${KUBE_CONTROLLER_MANAGER_BIN:-}'"
}

usage() { sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

main() {
  local cmd="${1:-}"; shift || true
  case "$cmd" in
    build) cmd_build "$@" ;;
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    smoke) load_env; CLUSTER_DIR="$CLUSTER_DIR" "$PYTHON" "$HERE/kapi.py" smoke "$@" ;;
    smoke-scheduler) load_env; CLUSTER_DIR="$CLUSTER_DIR" "$PYTHON" "$HERE/kapi.py" smoke-scheduler "$@" ;;
    start-scheduler) cmd_start_scheduler "$@" ;;
    start-controller-manager) cmd_start_controller_manager "$@" ;;
    restart-apiserver) cmd_restart_apiserver "$@" ;;
    path) resolve_bin_dirs; bin_path "${1:?usage: path BINARY}" ;;
    env) cmd_env ;;
    pin-kube) cmd_pin_kube "$@" ;;
    -h | --help | help | "") usage ;;
    *) usage; die "unknown command: $cmd" ;;
  esac
}

main "$@"
