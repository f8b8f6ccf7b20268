"""An HTTP proxy for the fetch tests, as a site's proxy would be reached:
it takes CONNECT requests (what kdeploy's HTTP client sends to a proxy),
logs each target as "CONNECT host:port" to a file, and tunnels every one
to the one upstream it was given (the test's file server), so a host name
that does not resolve (files.invalid) is still served through it.

usage: connect_proxy.py UPSTREAM_PORT LOG PORT_FILE
Writes the port it listens on to PORT_FILE once ready."""
import os, socket, socketserver, sys, threading

upstream, log, port_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode("latin-1").strip()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        method, target = (line.split(" ") + ["", ""])[:2]
        with open(log, "a") as f:
            f.write(f"{method} {target}\n")
        if method != "CONNECT":
            self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        up = socket.create_connection(("127.0.0.1", upstream))
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.wfile.flush()
        t = threading.Thread(target=pipe, args=(up, self.connection), daemon=True)
        t.start()
        pipe(self.connection, up)
        t.join()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
