#!/bin/sh
# make-etcd-certs.sh DIR NAME=IP...: the lean playbook's etcd PKI, made with
# openssl on the controller as Kubespray's make-ssl-etcd.sh makes it on the
# first etcd node: a CA, and per member a member certificate (server and
# peer), an admin and a node client certificate, EC P-256, with the member's
# address, 127.0.0.1 and its name as subject alternative names. Files there
# already are kept (the same PKI for every run on the same lab addresses).
set -eu
dir=$1
shift
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"
umask 077
if [ ! -f ca.pem ]; then
	openssl ecparam -name prime256v1 -genkey -noout -out ca-key.pem
	openssl req -x509 -new -key ca-key.pem -days 3650 -subj /CN=etcd-ca -out ca.pem
fi
for m in "$@"; do
	name=${m%%=*} ip=${m#*=}
	for kind in member admin node; do
		[ ! -f "$kind-$name.pem" ] || continue
		printf 'subjectAltName=IP:%s,IP:127.0.0.1,DNS:%s,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' \
			"$ip" "$name" >ext.cnf
		openssl ecparam -name prime256v1 -genkey -noout -out "$kind-$name-key.pem"
		openssl req -new -key "$kind-$name-key.pem" -subj "/CN=etcd-$kind-$name" -out req.csr
		openssl x509 -req -in req.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 \
			-extfile ext.cnf -out "$kind-$name.pem" 2>/dev/null
	done
done
rm -f ext.cnf req.csr
