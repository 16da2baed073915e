# shellcheck shell=bash
# Certificates and kubeconfigs of the one-machine cluster (sourced by scripts/cluster/kube-up.sh
# after scripts/cluster/kube/lib.sh). All made with openssl into $KUBE_DIR/pki, once: a cluster
# directory that has them keeps them.
#
# One CA signs: the API server's serving certificate (SANs: the bridge gateway, 127.0.0.1, the
# `kubernetes` Service's ClusterIP and its DNS names), each kubelet's serving certificate (its
# node IP and name), and the client certificates the RBAC bootstrap policy expects: admin
# (O=system:masters), system:kube-controller-manager, system:kube-scheduler, system:kube-proxy,
# system:node:NAME (O=system:nodes; one per node: NodeRestriction lets a kubelet touch only its
# own Node) and the API server's client to the kubelets. The service-account token signing pair
# is a separate RSA key.

# new_cert NAME SUBJECT [SANS] [USAGE]: a P-256 key and a CA-signed certificate, pki/NAME.{key,crt}.
new_cert() {
  local name="$1" subj="$2" sans="${3:-}" usage="${4:-clientAuth}" pki="$KUBE_DIR/pki"
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$name.key" 2>/dev/null
  openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -z "$sans" ] || echo "subjectAltName=$sans"
  } >"$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

# kubeconfig_file FILE USER CONTEXT USER_FIELDS: a kubeconfig for the API server on the bridge
# gateway, whose user USER has USER_FIELDS (YAML lines indented by four spaces).
kubeconfig_file() {
  local file="$1" user="$2" context="$3" fields="$4"
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: dljob-kube
  cluster:
    server: https://$KUBE_GW:$KUBE_API_PORT
    certificate-authority-data: $(base64 -w0 "$KUBE_DIR/pki/ca.crt")
users:
- name: $user
  user:
$fields
contexts:
- name: $context
  context: {cluster: dljob-kube, user: $user}
current-context: $context
EOF
  chmod 600 "$file"
}

# write_kubeconfig FILE USER CERTNAME: a kubeconfig whose user presents pki/CERTNAME.{crt,key}.
write_kubeconfig() {
  local pki="$KUBE_DIR/pki"
  kubeconfig_file "$1" "$2" dljob-kube \
    "    client-certificate-data: $(base64 -w0 "$pki/$3.crt")
    client-key-data: $(base64 -w0 "$pki/$3.key")"
}

make_pki() {
  local pki="$KUBE_DIR/pki"
  [ -f "$pki/done" ] && return 0
  mkdir -p "$pki"
  chmod 700 "$pki"
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=dljob-kube-ca" -days 365 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$pki/ca.crt" 2>/dev/null
  local dns="DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  dns="$dns,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
  new_cert apiserver "/CN=kube-apiserver" "IP:$KUBE_GW,IP:127.0.0.1,IP:$KUBE_SVC_IP,$dns" serverAuth
  new_cert admin "/O=system:masters/CN=dljob-admin"
  new_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  new_cert controller-manager "/CN=system:kube-controller-manager"
  new_cert scheduler "/CN=system:kube-scheduler"
  new_cert kube-proxy "/CN=system:kube-proxy"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  write_kubeconfig "$KUBECONFIG_ADMIN" dljob-admin admin
  write_kubeconfig "$KUBE_DIR/controller-manager.kubeconfig" system:kube-controller-manager \
    controller-manager
  write_kubeconfig "$KUBE_DIR/scheduler.kubeconfig" system:kube-scheduler scheduler
  write_kubeconfig "$KUBE_DIR/kube-proxy.kubeconfig" system:kube-proxy kube-proxy
  touch "$pki/done"
}

# make_node_pki: the kubelet certificates and kubeconfig of the node node_env chose (once:
# pki/kubelet$NODE_TAG.{crt,key}, pki/kubelet-serving$NODE_TAG.{crt,key},
# $NODE_DIR/kubelet.kubeconfig).
make_node_pki() {
  [ -f "$KUBE_DIR/pki/kubelet$NODE_TAG.crt" ] && [ -f "$NODE_DIR/kubelet.kubeconfig" ] && return 0
  mkdir -p "$NODE_DIR"
  new_cert "kubelet-serving$NODE_TAG" "/CN=$NODE_NAME" "IP:$NODE_GW,DNS:$NODE_NAME" serverAuth
  new_cert "kubelet$NODE_TAG" "/O=system:nodes/CN=system:node:$NODE_NAME"
  write_kubeconfig "$NODE_DIR/kubelet.kubeconfig" "system:node:$NODE_NAME" "kubelet$NODE_TAG"
}

# make_exec_user: a second way in, the way managed clusters (EKS, GKE, AKS) hand out credentials:
# $KUBECONFIG_EXEC, whose user runs a client.authentication.k8s.io credential plugin
# ($KUBE_DIR/bin/exec-credential) that prints a bearer token with an expiry. The API server knows
# the token from --token-auth-file ($KUBE_DIR/tokens.csv: user dljob-exec, group system:masters).
# Each run of the plugin appends a line to logs/exec-credential.log, so a test can see that a
# client ran it. The token is made once; the kubeconfig and the plugin are written every start.
make_exec_user() {
  local pki="$KUBE_DIR/pki" plugin="$KUBE_DIR/bin/exec-credential"
  if [ ! -s "$pki/exec-token" ]; then
    (umask 077; openssl rand -hex 32 >"$pki/exec-token")
  fi
  (umask 077; echo "$(cat "$pki/exec-token"),dljob-exec,dljob-exec,\"system:masters\"" \
    >"$KUBE_DIR/tokens.csv")
  mkdir -p "$KUBE_DIR/bin" "$KUBE_DIR/logs"
  cat >"$plugin" <<EOF
#!/bin/sh
# A kubeconfig credential plugin (client.authentication.k8s.io/v1beta1), written by kube-up.sh.
set -eu
date -u +%Y-%m-%dT%H:%M:%SZ >>"$KUBE_DIR/logs/exec-credential.log"
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
printf '"status":{"token":"%s","expirationTimestamp":"%s"}}\n' \\
  "\$(cat "$pki/exec-token")" "\$(date -u -d '+10 min' +%Y-%m-%dT%H:%M:%SZ)"
EOF
  chmod 700 "$plugin"
  kubeconfig_file "$KUBECONFIG_EXEC" dljob-exec dljob-kube-exec \
    "    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: $plugin
      installHint: \"run scripts/cluster/kube-up.sh (it writes this plugin)\""
}
