#!/usr/bin/python3
"""A token issuer for the registry tests: the Bearer token flow of distribution's
docs/spec/auth/token.md, run against the real registry (Debian's docker-registry), which verifies the
tokens. It makes a P-256 key and a self-signed certificate for it, writes the certificate where the
registry's `auth: token: rootcertbundle` reads it, and answers GET /token?service=…&scope=… with an
ES256 JWT whose header carries the certificate (x5c). With --user/--password it grants only to that
Basic credential (anything else is 401); with --anonymous it grants pull to anyone.

usage: registry_token_issuer.py CERT_OUT PORT_OUT --issuer NAME --service NAME
                                [--user U --password P] [--anonymous]
Prints nothing; writes the port it listens on (127.0.0.1) to PORT_OUT once it is ready.
"""

import argparse
import base64
import datetime
import json
import os
import secrets
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cert_out")
    parser.add_argument("port_out")
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--anonymous", action="store_true")
    args = parser.parse_args()

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, args.issuer)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    with open(args.cert_out, "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    cert_der = base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()

    def sign(claims):
        header = {"typ": "JWT", "alg": "ES256", "x5c": [cert_der]}
        signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        der = key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    expected = None
    if args.user is not None:
        expected = "Basic " + base64.b64encode(f"{args.user}:{args.password}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_GET(self):
            url = urllib.parse.urlparse(self.path)
            if url.path != "/token":
                self.send_error(404)
                return
            query = urllib.parse.parse_qs(url.query)
            given = self.headers.get("Authorization")
            if expected is not None and given != expected:
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"details":"incorrect username or password"}')
                return
            if expected is None and not args.anonymous:
                self.send_error(401)
                return
            access = []
            for scope in query.get("scope", []):
                kind, _, rest = scope.partition(":")
                repo, _, actions = rest.rpartition(":")
                granted = [a for a in actions.split(",") if a == "pull"]
                access.append({"type": kind, "name": repo, "actions": granted})
            issued = int(time.time())
            claims = {
                "iss": args.issuer,
                "sub": args.user or "",
                "aud": query.get("service", [args.service])[0],
                "exp": issued + 300,
                "nbf": issued - 10,
                "iat": issued,
                "jti": secrets.token_hex(8),
                "access": access,
            }
            token = sign(claims)
            body = json.dumps({"token": token, "expires_in": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = HTTPServer(("127.0.0.1", 0), Handler)
    temp = args.port_out + ".tmp"
    with open(temp, "w") as out:
        out.write(str(server.server_address[1]))
    os.rename(temp, args.port_out)
    server.serve_forever()


if __name__ == "__main__":
    main()
