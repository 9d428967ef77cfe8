#!/usr/bin/env bash
# scripts/make_tls_config.sh DIR - a throwaway CA, a server certificate for
# localhost and 127.0.0.1 (openssl, as README's TLS section), and
# DIR/web-config.yml naming them (tls/server.crt, tls/server.key, relative to
# the file's folder), for the checks that start gpubenchd over TLS
# (scripts/container_check.sh, tests/package/test_deb_chroot.sh).  The
# client's CA is DIR/tls/ca.crt.  Files are world-readable: test keys only.
set -euo pipefail
dir=${1:?usage: scripts/make_tls_config.sh DIR}
mkdir -p "$dir/tls"
cd "$dir/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj /CN=gpubench-check-ca -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost \
  -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >ext.cnf
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
  -out server.crt -extfile ext.cnf 2>/dev/null
rm -f ca.key server.csr ext.cnf ca.srl
chmod 0755 . && chmod 0644 ./*
cat >../web-config.yml <<'YAML'
tls_server_config:
  cert_file: tls/server.crt
  key_file: tls/server.key
  min_version: TLS12
YAML
chmod 0644 ../web-config.yml
