#!/bin/sh
# Generates the certificates the HTTPS tests use, into DIR, with the openssl command only.
#   ca.pem/ca.key          a test root CA
#   server.pem/key         localhost + 127.0.0.1, signed by the CA (the valid case)
#   other.pem/key          other.test only, signed by the CA (a second name on one port: SNI)
#   ip.pem/key             IP address 127.0.0.1 only
#   wronghost.pem/key      wrong.example only
#   selfsigned.pem/key     localhost, self-signed
#   expired.pem/key        localhost, signed by the CA, validity ended in 2020
#   notyet.pem/key         localhost, signed by the CA, validity starts in 2099
#   client.pem/key         a client certificate signed by the CA
#   client-encrypted.key   the client key under the passphrase "secret"
#   spare.key              an unused key, whose pin serves as a backup pin
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
[ -f done ] && exit 0
q() { "$@" >/dev/null 2>&1 || { echo "make_certs.sh: failed: $*" >&2; "$@"; exit 1; }; }

cat > ca.cnf <<'CNF'
[ ca ]
default_ca = test_ca
[ test_ca ]
dir = .
database = index.txt
new_certs_dir = issued
serial = serial
default_md = sha256
policy = anything
copy_extensions = copy
unique_subject = no
[ anything ]
commonName = supplied
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = placeholder
[ ca_ext ]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ server_ext ]
basicConstraints = CA:false
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
[ client_ext ]
basicConstraints = CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
CNF
mkdir -p issued
: > index.txt
echo 1000 > serial

q openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj "/CN=Courier Test CA" \
  -config ca.cnf -extensions ca_ext

# name, subject CN, subjectAltName, extension section, start, end
issue() {
  q openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" -addext "subjectAltName=$3"
  q openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in "$1.csr" -out "$1.pem" -notext \
    -extensions "$4" -startdate "$5" -enddate "$6"
}
issue server localhost "DNS:localhost,IP:127.0.0.1" server_ext 20240101000000Z 20991231000000Z
issue other other.test "DNS:other.test" server_ext 20240101000000Z 20991231000000Z
issue ip 127.0.0.1 "IP:127.0.0.1" server_ext 20240101000000Z 20991231000000Z
issue wronghost wrong.example "DNS:wrong.example" server_ext 20240101000000Z 20991231000000Z
issue expired localhost "DNS:localhost,IP:127.0.0.1" server_ext 20190101000000Z 20200101000000Z
issue notyet localhost "DNS:localhost,IP:127.0.0.1" server_ext 20990101000000Z 20991231000000Z
issue client "courier test client" "DNS:client.example" client_ext 20240101000000Z 20991231000000Z
q openssl req -x509 -newkey rsa:2048 -nodes -keyout selfsigned.key -out selfsigned.pem -days 3650 \
  -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
q openssl pkey -in client.key -out client-encrypted.key -aes256 -passout pass:secret
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out spare.key
q openssl pkey -in spare.key -pubout -out spare.pub
q openssl pkey -in server.key -pubout -out server.pub
cat server.pem ca.pem > server-chain.pem
cat other.pem ca.pem > other-chain.pem
touch done
