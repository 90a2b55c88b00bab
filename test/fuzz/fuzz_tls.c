/*
 * Fuzz harness: the TLS entry of a connection (transport/tls/tls.h), the
 * bytes a client sends to tls-port before any session exists - ClientHello
 * and whatever follows it, or garbage - through the same memory-BIO layer
 * the socket server uses, in reads cut at arbitrary boundaries.
 *
 * Input: [mode u8][chunk seed u16][the byte stream a client sends]
 *   mode % 3: tls-auth-clients no / yes / optional (GB_TLS_AUTH_*)
 *   mode bit 2: the handshake through gb_tls_handshake first, as the
 *     handshake thread runs it, then gb_tls_read; else gb_tls_read alone
 *     (the loop's fallback)
 *   the stream is fed in pieces of 1..512 bytes chosen by the seed; after
 *   each piece the session is read until it wants more, fails or closes,
 *   and its output (ServerHello, alerts) is taken as the socket would.
 *
 * Checks: a read never returns more than it was given room for; the
 * output is all taken; a failed session stays failed and takes no
 * plaintext; replies cannot be written before the handshake is done.
 *
 * The server's certificate is made once per process (a P-256 key and a
 * self-signed certificate, also the CA for client certificates) into the
 * scratch directory, as tls-cert-file/tls-key-file/tls-ca-cert-file
 * would name them. The server's randomness differs between runs, so what
 * this reaches is the entry: record and handshake-message parsing up to
 * the client's Finished, which no fuzzer can forge.
 */
#include "fuzz_util.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "transport/tls/tls.h"

static void write_pem(const char *path, EVP_PKEY *key, X509 *cert)
{
    FILE *f = fopen(path, "w");
    FUZZ_CHECK(f != NULL, "%s: %s", path, strerror(errno));
    int ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) : PEM_write_X509(f, cert);
    fclose(f);
    FUZZ_CHECK(ok == 1, "writing %s", path);
}

/* A throwaway identity for the server, made here so no key is committed. */
static gb_tls_context *make_context(void)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    FUZZ_CHECK(key && cert, "out of memory for the certificate");
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"fuzz", -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509_set_pubkey(cert, key);
    FUZZ_CHECK(X509_sign(cert, key, EVP_sha256()) > 0, "signing the certificate");
    char cert_path[600], key_path[600];
    fuzz_path(cert_path, sizeof cert_path, "cert.pem");
    fuzz_path(key_path, sizeof key_path, "key.pem");
    write_pem(cert_path, NULL, cert);
    write_pem(key_path, key, NULL);
    X509_free(cert);
    EVP_PKEY_free(key);
    const gb_tls_config cfg = {.cert_file = cert_path,
                               .key_file = key_path,
                               .ca_cert_file = cert_path,
                               .session_caching = true,
                               .session_cache_size = 20480,
                               .session_cache_timeout = 300,
                               .needs_ca = true};
    char err[512];
    gb_tls_context *ctx = gb_tls_context_new(&cfg, err, sizeof err);
    FUZZ_CHECK(ctx != NULL, "the fuzz context: %s", err);
    unlink(cert_path);
    unlink(key_path);
    return ctx;
}

static void take_all_output(gb_tls_session *s)
{
    char out[4096];
    while (gb_tls_take_output(s, out, sizeof out) > 0)
        ;
    FUZZ_CHECK(gb_tls_output_pending(s) == 0, "output left after taking it all");
}

/* The handshake alone, as the handshake thread drives it: true once it is
 * established, false while it wants more (*alive) or after it failed. */
static bool shake(gb_tls_session *s, bool *alive)
{
    char err[320];
    int rc = gb_tls_handshake(s, err, sizeof err);
    take_all_output(s);
    *alive = rc >= 0;
    if (rc < 0) {
        if (fuzz_verbose())
            fprintf(stderr, "handshake failed: %s\n", err);
        FUZZ_CHECK(gb_tls_handshake(s, err, sizeof err) < 0, "a failed handshake went on");
    }
    return rc > 0;
}

/* Reads until the session wants more; false once it failed or closed. */
static bool drain(gb_tls_session *s, bool *established)
{
    static char plain[16 * 1024 + 1];
    if (!*established) {
        bool alive;
        *established = shake(s, &alive);
        if (!*established)
            return alive;
    }
    for (;;) {
        char err[320];
        ssize_t n = gb_tls_read(s, plain, sizeof plain - 1, err, sizeof err);
        FUZZ_CHECK(n <= (ssize_t)(sizeof plain - 1), "read %zd bytes into %zu", n, sizeof plain - 1);
        take_all_output(s);
        if (n == GB_TLS_WANT_MORE)
            return true;
        if (n < 0) {
            if (fuzz_verbose())
                fprintf(stderr, "session ended: %s\n", n == GB_TLS_CLOSED ? "close_notify" : err);
            FUZZ_CHECK(n == GB_TLS_CLOSED || gb_tls_read(s, plain, sizeof plain - 1, err, sizeof err) == GB_TLS_FAILED,
                       "a failed session read again");
            return false;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gb_tls_context *ctx;
    if (!ctx)
        ctx = make_context();
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    int auth = mode % 3;
    bool established = !(mode & 4); /* not through gb_tls_handshake: gb_tls_read does it all */
    uint32_t seed = fuzz_u16(&in) | 1u;
    gb_tls_session *s = gb_tls_session_new(ctx, auth);
    FUZZ_CHECK(s != NULL, "out of memory for a session");
    FUZZ_CHECK(gb_tls_write(s, "x", 1) != 0, "a reply written before the handshake");
    while (in.left) {
        seed = seed * 1103515245u + 12345u;
        size_t piece = 1 + (seed >> 16) % 512;
        if (piece > in.left)
            piece = in.left;
        uint8_t *copy = fuzz_dup(in.p, piece); /* exact size: a read past it is an ASan report */
        int rc = gb_tls_feed(s, (const char *)copy, piece);
        free(copy);
        FUZZ_CHECK(rc == 0, "feeding %zu bytes", piece);
        in.p += piece;
        in.left -= piece;
        if (!drain(s, &established))
            break;
    }
    gb_tls_session_free(s);
    return 0;
}
