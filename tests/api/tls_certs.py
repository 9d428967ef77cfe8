"""Certificates for the TLS tests, made with openssl in a folder of the
test's own: a CA, a server certificate for 127.0.0.1 and localhost, a
client certificate, a second CA with a server certificate of its own, an
expired server certificate, and one for another host's name.

Each is signed with `openssl ca` (a fresh database each time), the one
command of openssl 3.0 that can set a certificate's dates in the past."""
import os
import subprocess

CA_CONFIG = """[ca]
default_ca = this
[this]
database = {dir}/index.txt
serial = {dir}/serial
new_certs_dir = {dir}
default_md = sha256
policy = anything
unique_subject = no
[anything]
commonName = supplied
"""

SERVER_EXT = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
CLIENT_EXT = "extendedKeyUsage=clientAuth\n"
OTHER_HOST_EXT = "subjectAltName=DNS:other.example\nextendedKeyUsage=serverAuth\n"


def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=60)


def new_key_args(key):
    return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key]


def make_ca(d, name):
    cert, key = os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")
    openssl("req", "-x509", *new_key_args(key), "-out", cert, "-subj", "/CN=gpubench " + name,
            "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return cert, key


def sign(d, name, ca, cn, ext, dates=("-days", "2")):
    """A key and a certificate for cn, signed by ca (cert, key), with the
    extensions ext and the dates given.  Their paths."""
    cert, key = os.path.join(d, name + ".pem"), os.path.join(d, name + ".key")
    work = os.path.join(d, name + ".ca")
    os.mkdir(work)
    with open(os.path.join(work, "index.txt"), "w"):
        pass
    with open(os.path.join(work, "serial"), "w") as f:
        f.write(os.urandom(8).hex() + "\n")
    for fname, text in (("ca.cnf", CA_CONFIG.format(dir=work)), ("ext", ext)):
        with open(os.path.join(work, fname), "w") as f:
            f.write(text)
    csr = os.path.join(work, "req.csr")
    openssl("req", "-new", *new_key_args(key), "-out", csr, "-subj", "/CN=" + cn)
    openssl("ca", "-batch", "-config", os.path.join(work, "ca.cnf"), "-cert", ca[0],
            "-keyfile", ca[1], "-extfile", os.path.join(work, "ext"), "-notext",
            *dates, "-in", csr, "-out", cert)
    return cert, key


class Certs:
    """The files, made in d: .ca and .other_ca are the CAs' certificates;
    the rest are (certificate, key) pairs."""

    def __init__(self, d):
        ca = make_ca(d, "ca")
        other_ca = make_ca(d, "other-ca")
        self.ca, self.other_ca = ca[0], other_ca[0]
        self.server = sign(d, "server", ca, "127.0.0.1", SERVER_EXT)
        self.client = sign(d, "client", ca, "a gpubench hub", CLIENT_EXT)
        self.other_server = sign(d, "other-server", other_ca, "127.0.0.1", SERVER_EXT)
        self.expired = sign(d, "expired", ca, "127.0.0.1", SERVER_EXT,
                            ("-startdate", "20200101000000Z", "-enddate", "20200102000000Z"))
        self.other_host = sign(d, "other-host", ca, "other.example", OTHER_HOST_EXT)
