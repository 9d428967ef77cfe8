"""A TLS front for the tests of gpubench speaking TLS to others (peers, the
webhook, the client) without gpubenchd serving TLS itself: Python's ssl
module listens on a loopback port with a server certificate (optionally
requiring a client certificate its CA signed) and forwards the bytes of
each connection to a plain gpubenchd, a thread each way.

start_tls_node() is what the tests call "a TLS node"; once gpubenchd serves
TLS itself (--web-config), it can start one of those instead and the tests
stay as they are.  https_receiver() is a webhook receiver over https."""
import http.server
import json
import os
import socket
import ssl
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402


def server_context(cert, client_ca=None):
    """TLS 1.2 or later with cert (a (cert, key) pair); with client_ca, a
    client certificate that CA signed is required at the handshake."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(*cert)
    if client_ca:
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


class TlsFront:
    """Listens with TLS on 127.0.0.1 (port 0: the kernel's pick) and hands
    each connection's bytes to backend_port and back.  handshake_errors
    holds why each refused handshake was refused."""

    def __init__(self, backend_port, cert, client_ca=None):
        self.backend_port = backend_port
        self.ctx = server_context(cert, client_ca)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.handshake_errors = []
        self.closed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        # The handshake in the connection's thread: a slow or failing
        # client holds up no other.
        conn.settimeout(10)
        tls = self.ctx.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        try:
            tls.do_handshake()
        except (ssl.SSLError, OSError) as e:
            self.handshake_errors.append(str(e))
            linger_close(tls)
            return
        tls.settimeout(None)
        try:
            backend = socket.create_connection(("127.0.0.1", self.backend_port), timeout=10)
        except OSError:
            tls.close()
            return
        backend.settimeout(None)
        threading.Thread(target=pump, args=(backend, tls), daemon=True).start()
        pump(tls, backend)

    def stop(self):
        self.closed = True
        self.sock.close()


def linger_close(conn):
    """Closes conn (its TLS, if any, abandoned) after reading what the client still sends (as servers
    do): closed with unread bytes, the kernel would reset the connection,
    and a TLS 1.3 client that already sent its request could lose the
    alert saying why its certificate was refused."""
    try:
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(2)
        while conn.recv(65536):
            pass
    except OSError:
        pass
    conn.close()


def pump(src, dst):
    """src's bytes to dst until either end closes; then both are closed."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.close()
        except OSError:
            pass


class TlsNode:
    """A gpubenchd reached over https: url (https://127.0.0.1:PORT), and the
    plain daemon behind the front, to post runs to as a test's own.  stop()
    stops the daemon too when the node started it."""

    def __init__(self, daemon, front, owns_daemon):
        self.daemon, self.front, self.owns_daemon = daemon, front, owns_daemon
        self.url = "https://127.0.0.1:%d" % front.port

    def stop(self):
        self.front.stop()
        return self.daemon.stop() if self.owns_daemon else None


def start_tls_node(cert, client_ca=None, daemon=None, **daemon_args):
    """A TLS node serving cert (a (cert, key) pair), requiring a client
    certificate client_ca signed when it is given: a front before daemon,
    or before a new gpubenchd started with daemon_args."""
    owns = daemon is None
    if owns:
        daemon = Daemon(**daemon_args).start()
    return TlsNode(daemon, TlsFront(daemon.port, cert, client_ca), owns)


class HookReceiver(http.server.BaseHTTPRequestHandler):
    """Keeps each posted body (JSON) in the server's `bodies`."""

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        self.server.bodies.append(json.loads(self.rfile.read(n)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def https_receiver(cert):
    """A webhook receiver over https with cert, started; its url is
    https://127.0.0.1:PORT/hook and what it got is in .bodies.  Shut down
    with .shutdown() and .server_close()."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HookReceiver)
    server.bodies = []
    server.socket = server_context(cert).wrap_socket(server.socket, server_side=True)
    server.url = "https://127.0.0.1:%d/hook" % server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
