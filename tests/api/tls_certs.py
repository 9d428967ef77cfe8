"""Certificates for the TLS tests, made with openssl in a folder of the test's.

CA: a CA; server_for(ca): a server certificate for 127.0.0.1 and localhost
(SAN) signed by it; client_for(ca): a client certificate.  Each is a pair of
PEM files (cert, key).  Keys are P-256, so making them takes milliseconds.
"""
import os
import shutil
import subprocess
import tempfile
import unittest


def _run(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Certs:
    def __init__(self, folder):
        self.dir = folder
        os.makedirs(folder, exist_ok=True)
        self.serial = 0x1000

    def path(self, name):
        return os.path.join(self.dir, name)

    def key(self, name):
        _run("ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", name + ".key",
             cwd=self.dir)
        return self.path(name + ".key")

    def ca(self, name):
        self.key(name)
        _run("req", "-x509", "-new", "-key", name + ".key", "-out", name + ".crt",
             "-days", "30", "-subj", "/CN=" + name,
             "-addext", "basicConstraints=critical,CA:true",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=self.dir)
        return self.path(name + ".crt")

    def issue(self, name, ca, usage, days=30, san=None, expired=False, not_before=None):
        """A certificate NAME.crt signed by CA (a ca() name); returns its serial (int).
        usage None: no extended key usage at all.  not_before: its start
        (YYYYMMDDhhmmssZ), for one not valid yet."""
        self.key(name)
        self.serial += 1
        ext = ["basicConstraints=CA:false"]
        if usage:
            ext.append("extendedKeyUsage=" + usage)
        if san:
            ext.append("subjectAltName=" + san)
        with open(self.path(name + ".ext"), "w") as f:
            f.write("\n".join(ext) + "\n")
        _run("req", "-new", "-key", name + ".key", "-out", name + ".csr",
             "-subj", "/CN=" + name, cwd=self.dir)
        args = ["x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
                "-set_serial", str(self.serial), "-out", name + ".crt", "-extfile", name + ".ext"]
        if expired:
            self._dated(name, ca, "20200101000000Z", "20200102000000Z")
        elif not_before:
            self._dated(name, ca, not_before, "21000101000000Z")
        else:
            _run(*(args + ["-days", str(days)]), cwd=self.dir)
        return self.serial

    def _dated(self, name, ca, start, end):
        # openssl x509 (3.0) takes no start date; openssl ca does, with a database.
        db = self.path(ca + ".index")
        open(db, "a").close()
        with open(self.path(ca + ".cnf"), "w") as f:
            f.write("[ca]\ndefault_ca=d\n[d]\ndatabase=%s\nnew_certs_dir=%s\n"
                    "serial=%s\ndefault_md=sha256\npolicy=p\nunique_subject=no\n[p]\n"
                    "commonName=supplied\n" % (db, self.dir, self.path(ca + ".serial")))
        with open(self.path(ca + ".serial"), "w") as f:
            f.write("%04X\n" % self.serial)
        _run("ca", "-batch", "-config", ca + ".cnf", "-cert", ca + ".crt", "-keyfile",
             ca + ".key", "-in", name + ".csr", "-out", name + ".crt", "-notext",
             "-extfile", name + ".ext", "-startdate", start, "-enddate", end,
             cwd=self.dir)

    def server(self, name, ca, expired=False, not_before=None):
        return self.issue(name, ca, "serverAuth", san="IP:127.0.0.1,DNS:localhost",
                          expired=expired, not_before=not_before)

    def client(self, name, ca):
        return self.issue(name, ca, "clientAuth")

    def mtls_config(self, name):
        """A web config NAME.yml serving server.crt that requires a client
        certificate ca.crt signed (RequireAndVerifyClientCert)."""
        return self.web_config(name, "server.crt", "server.key",
                               client_auth_type="RequireAndVerifyClientCert",
                               client_ca_file="ca.crt")

    def web_config(self, name, cert, key, **tls):
        """A web config file NAME.yml; tls adds keys of tls_server_config."""
        lines = ["tls_server_config:", "  cert_file: " + cert, "  key_file: " + key]
        lines += ["  %s: %s" % kv for kv in tls.items()]
        with open(self.path(name + ".yml"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return self.path(name + ".yml")


class PeerCerts:
    """The set the tests of gpubench speaking TLS to others use
    (test_tls_client.py), made in folder: .ca and .other_ca are the CAs'
    certificates; .server, .client, .other_server (signed by the other CA),
    .expired and .other_host (for another host's name) are (certificate,
    key) pairs."""

    def __init__(self, folder):
        c = Certs(folder)

        def pair(name):
            return c.path(name + ".crt"), c.path(name + ".key")

        self.ca, self.other_ca = c.ca("ca"), c.ca("other-ca")
        c.server("server", "ca")
        c.client("client", "ca")
        c.server("other-server", "other-ca")
        c.server("expired", "ca", expired=True)
        c.issue("other-host", "ca", "serverAuth", san="DNS:other.example")
        self.server, self.client = pair("server"), pair("client")
        self.other_server, self.expired = pair("other-server"), pair("expired")
        self.other_host = pair("other-host")


class CertsTestCase(unittest.TestCase):
    """A test case whose certificates lie in a folder of its own, removed at
    the end: cls.certs (a Certs) with the CA "ca" made; make_certs(c) adds
    the rest."""

    @classmethod
    def make_certs(cls, c):
        pass

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpubench-tls-")
        cls.certs = Certs(os.path.join(cls.tmp, "certs"))
        cls.certs.ca("ca")
        cls.make_certs(cls.certs)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
