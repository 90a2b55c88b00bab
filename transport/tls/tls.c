#include "transport/tls/tls.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "engine/core/engine.h"

struct gb_tls_context {
    SSL_CTX *ssl;
};

struct gb_tls_session {
    SSL *ssl;
    BIO *in;  /* what the socket brought, for OpenSSL to read */
    BIO *out; /* records OpenSSL wrote, for the socket */
    bool failed;
};

static bool unset(const char *s) { return !s || !*s; }

static const char *or_null(const char *s) { return unset(s) ? NULL : s; }

/* Logs a configuration failure in Redis's words and keeps it for err. */
static void config_failed(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void config_failed(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    gb_log(GB_LOG_WARNING, "%s", err);
}

static void last_ssl_error(char *buf, size_t len)
{
    unsigned long e = ERR_get_error();
    ERR_error_string_n(e, buf, len);
    ERR_clear_error();
}

/* Redis's parseProtocolsConfig: words TLSv1, TLSv1.1, TLSv1.2, TLSv1.3
 * (any case); unset means TLSv1.2 and TLSv1.3. A bit per version, or -1. */
enum { PROTO_V1 = 1, PROTO_V1_1 = 2, PROTO_V1_2 = 4, PROTO_V1_3 = 8 };

static int parse_protocols(const char *text)
{
    if (unset(text))
        return PROTO_V1_2 | PROTO_V1_3;
    static const struct {
        const char *word;
        int bit;
    } names[] = {{"tlsv1", PROTO_V1}, {"tlsv1.1", PROTO_V1_1}, {"tlsv1.2", PROTO_V1_2}, {"tlsv1.3", PROTO_V1_3}};
    /* Split on every space as Redis's sdssplitlen does: an empty word (two
     * spaces, a leading or trailing one, " ") is an unknown one. */
    int protocols = 0;
    for (const char *p = text;; p++) {
        size_t n = strcspn(p, " ");
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (n == strlen(names[i].word) && strncasecmp(p, names[i].word, n) == 0) {
                protocols |= names[i].bit;
                known = true;
            }
        if (!known)
            return -1;
        p += n;
        if (*p == '\0')
            return protocols;
    }
}

static void limit_protocols(SSL_CTX *ctx, int protocols)
{
    if (!(protocols & PROTO_V1))
        SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1);
    if (!(protocols & PROTO_V1_1))
        SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_1);
    if (!(protocols & PROTO_V1_2))
        SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_2);
    if (!(protocols & PROTO_V1_3))
        SSL_CTX_set_options(ctx, SSL_OP_NO_TLSv1_3);
}

/* OpenSSL asks for tls-key-file-pass through this. */
static int key_password(char *buf, int size, int rwflag, void *u)
{
    (void)rwflag;
    const char *pass = u;
    if (!pass)
        return -1;
    size_t n = strlen(pass);
    if (n > (size_t)size)
        return -1;
    memcpy(buf, pass, n);
    return (int)n;
}

/* The certificate, key, CA and ciphers (Redis's createSSLContext); a
 * client context takes the client identity when one is set. */
static bool load_identity(SSL_CTX *ctx, const gb_tls_config *cfg, bool client, char *err, size_t errlen)
{
    char why[256];
    bool own = client && !unset(cfg->client_cert_file);
    const char *cert = own ? cfg->client_cert_file : cfg->cert_file;
    const char *key = own ? cfg->client_key_file : cfg->key_file;
    const char *pass = own ? cfg->client_key_file_pass : cfg->key_file_pass;
    SSL_CTX_set_default_passwd_cb(ctx, key_password);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)or_null(pass));
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        last_ssl_error(why, sizeof why);
        config_failed(err, errlen, "Failed to load certificate: %s: %s", cert, why);
        return false;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0) {
        last_ssl_error(why, sizeof why);
        config_failed(err, errlen, "Failed to load private key: %s: %s", key, why);
        return false;
    }
    /* The key must be the certificate's: OpenSSL checks it as it loads the
     * key (above); this says so plainly if it ever lets one through. */
    if (SSL_CTX_check_private_key(ctx) != 1) {
        last_ssl_error(why, sizeof why);
        config_failed(err, errlen, "Private key does not match the certificate: %s: %s", key, why);
        return false;
    }
    if ((!unset(cfg->ca_cert_file) || !unset(cfg->ca_cert_dir)) &&
        SSL_CTX_load_verify_locations(ctx, or_null(cfg->ca_cert_file), or_null(cfg->ca_cert_dir)) <= 0) {
        last_ssl_error(why, sizeof why);
        config_failed(err, errlen, "Failed to configure CA certificate(s) file/directory: %s", why);
        return false;
    }
    if (!unset(cfg->ciphers) && !SSL_CTX_set_cipher_list(ctx, cfg->ciphers)) {
        config_failed(err, errlen, "Failed to configure ciphers: %s", cfg->ciphers);
        return false;
    }
    if (!unset(cfg->ciphersuites) && !SSL_CTX_set_ciphersuites(ctx, cfg->ciphersuites)) {
        config_failed(err, errlen, "Failed to configure ciphersuites: %s", cfg->ciphersuites);
        return false;
    }
    return true;
}

/* tls-dh-params-file, or OpenSSL's automatic parameters. */
static bool load_dh_params(SSL_CTX *ctx, const char *path, char *err, size_t errlen)
{
    if (unset(path)) {
        SSL_CTX_set_dh_auto(ctx, 1);
        return true;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        config_failed(err, errlen, "Failed to load %s: %s", path, strerror(errno));
        return false;
    }
    EVP_PKEY *pkey = NULL;
    OSSL_DECODER_CTX *dctx =
        OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", NULL, "DH", OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, NULL, NULL);
    bool ok = dctx && OSSL_DECODER_from_fp(dctx, f);
    OSSL_DECODER_CTX_free(dctx);
    fclose(f);
    if (!ok) {
        EVP_PKEY_free(pkey);
        config_failed(err, errlen, "%s: failed to read DH params.", path);
        return false;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, pkey) <= 0) {
        char why[256];
        last_ssl_error(why, sizeof why);
        EVP_PKEY_free(pkey);
        config_failed(err, errlen, "Failed to load DH params file: %s: %s", path, why);
        return false;
    }
    return true; /* pkey is the context's now */
}

static void set_session_cache(SSL_CTX *ctx, const gb_tls_config *cfg)
{
    if (!cfg->session_caching) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        return;
    }
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, cfg->session_cache_size);
    SSL_CTX_set_timeout(ctx, cfg->session_cache_timeout);
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"redis", 5); /* Redis's: sessions carry over */
}

/* What Redis's tlsConfigure checks before it builds anything. */
static bool config_complete(const gb_tls_config *cfg, int *protocols, char *err, size_t errlen)
{
    if (unset(cfg->cert_file)) {
        config_failed(err, errlen, "No tls-cert-file configured!");
        return false;
    }
    if (unset(cfg->key_file)) {
        config_failed(err, errlen, "No tls-key-file configured!");
        return false;
    }
    if (cfg->needs_ca && unset(cfg->ca_cert_file) && unset(cfg->ca_cert_dir)) {
        config_failed(err, errlen, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
                                   "tls-replication or tls-auth-clients are enabled!");
        return false;
    }
    *protocols = parse_protocols(cfg->protocols);
    if (*protocols < 0) {
        config_failed(err, errlen,
                      "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and "
                      "'TLSv1.3'.");
        return false;
    }
    return true;
}

/* An SSL_CTX of method's kind with what both sides share: Redis's base
 * options and the protocols; NULL (logged) when the settings are
 * incomplete or there is no memory. */
static SSL_CTX *context_begin(const SSL_METHOD *method, const gb_tls_config *cfg, char *err, size_t errlen)
{
    int protocols;
    if (!config_complete(cfg, &protocols, err, errlen))
        return NULL;
    SSL_CTX *ctx = SSL_CTX_new(method);
    if (!ctx) {
        config_failed(err, errlen, "Failed to create the TLS context: out of memory");
        return NULL;
    }
    /* Client-initiated renegotiation stays off: OpenSSL 3 refuses it unless
     * SSL_OP_ALLOW_CLIENT_RENEGOTIATION is set (Redis turns it off too). */
    SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_SINGLE_DH_USE);
    limit_protocols(ctx, protocols);
    return ctx;
}

/* The context, once ctx is loaded (loaded: its identity and the rest went
 * in); ctx is freed when it is not. */
static gb_tls_context *context_end(SSL_CTX *ctx, bool loaded, char *err, size_t errlen)
{
    gb_tls_context *out = loaded ? calloc(1, sizeof *out) : NULL;
    if (out)
        out->ssl = ctx;
    else if (loaded)
        config_failed(err, errlen, "Failed to create the TLS context: out of memory");
    if (!out)
        SSL_CTX_free(ctx);
    return out;
}

gb_tls_context *gb_tls_context_new(const gb_tls_config *cfg, char *err, size_t errlen)
{
    SSL_CTX *ctx = context_begin(TLS_server_method(), cfg, err, errlen);
    if (!ctx)
        return NULL;
    if (cfg->prefer_server_ciphers)
        SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    bool loaded = load_identity(ctx, cfg, false, err, errlen) && load_dh_params(ctx, cfg->dh_params_file, err, errlen);
    if (loaded)
        set_session_cache(ctx, cfg);
    return context_end(ctx, loaded, err, errlen);
}

gb_tls_context *gb_tls_client_context_new(const gb_tls_config *cfg, char *err, size_t errlen)
{
    if (!unset(cfg->client_cert_file) && unset(cfg->client_key_file)) {
        config_failed(err, errlen, "No tls-client-key-file configured!");
        return NULL;
    }
    SSL_CTX *ctx = context_begin(TLS_client_method(), cfg, err, errlen);
    if (!ctx)
        return NULL;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL); /* the primary's certificate must chain to the CA */
    return context_end(ctx, load_identity(ctx, cfg, true, err, errlen), err, errlen);
}

gb_tls_config gb_tls_config_from(const gb_settings *cfg)
{
    return (gb_tls_config){
        .cert_file = cfg->tls_cert_file,
        .key_file = cfg->tls_key_file,
        .key_file_pass = cfg->tls_key_file_pass,
        .ca_cert_file = cfg->tls_ca_cert_file,
        .ca_cert_dir = cfg->tls_ca_cert_dir,
        .protocols = cfg->tls_protocols,
        .ciphers = cfg->tls_ciphers,
        .ciphersuites = cfg->tls_ciphersuites,
        .dh_params_file = cfg->tls_dh_params_file,
        .prefer_server_ciphers = cfg->tls_prefer_server_ciphers,
        .session_caching = cfg->tls_session_caching,
        .session_cache_size = cfg->tls_session_cache_size,
        .session_cache_timeout = cfg->tls_session_cache_timeout,
        .needs_ca = cfg->tls_auth_clients != GB_TLS_AUTH_NO || cfg->tls_replication || cfg->tls_cluster,
        .client_cert_file = cfg->tls_client_cert_file,
        .client_key_file = cfg->tls_client_key_file,
        .client_key_file_pass = cfg->tls_client_key_file_pass,
    };
}

void gb_tls_context_free(gb_tls_context *ctx)
{
    if (!ctx)
        return;
    SSL_CTX_free(ctx->ssl); /* reference counted: sessions made from it keep it */
    free(ctx);
}

/* ---- sessions ---------------------------------------------------------------- */

/* A session over two memory BIOs, neither side chosen yet. */
static gb_tls_session *session_new(gb_tls_context *ctx)
{
    gb_tls_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ssl = SSL_new(ctx->ssl);
    s->in = BIO_new(BIO_s_mem());
    s->out = BIO_new(BIO_s_mem());
    if (!s->ssl || !s->in || !s->out) {
        SSL_free(s->ssl);
        BIO_free(s->in);
        BIO_free(s->out);
        free(s);
        return NULL;
    }
    /* An empty input BIO means "wait for the socket", not end of file. */
    BIO_set_mem_eof_return(s->in, -1);
    SSL_set_bio(s->ssl, s->in, s->out); /* the SSL owns both now */
    return s;
}

gb_tls_session *gb_tls_client_session_new(gb_tls_context *ctx)
{
    gb_tls_session *s = session_new(ctx);
    if (s)
        SSL_set_connect_state(s->ssl);
    return s;
}

gb_tls_session *gb_tls_session_new(gb_tls_context *ctx, int auth)
{
    gb_tls_session *s = session_new(ctx);
    if (!s)
        return NULL;
    if (auth == GB_TLS_AUTH_NO)
        SSL_set_verify(s->ssl, SSL_VERIFY_NONE, NULL);
    else if (auth == GB_TLS_AUTH_OPTIONAL)
        SSL_set_verify(s->ssl, SSL_VERIFY_PEER, NULL);
    SSL_set_accept_state(s->ssl);
    return s;
}

void gb_tls_session_free(gb_tls_session *s)
{
    if (!s)
        return;
    SSL_free(s->ssl);
    free(s);
}

int gb_tls_feed(gb_tls_session *s, const char *data, size_t len)
{
    while (len > 0) {
        int chunk = len > (size_t)1 << 30 ? 1 << 30 : (int)len;
        int n = BIO_write(s->in, data, chunk);
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Why a session failed, for the log line: OpenSSL's reason, and the
 * certificate check's when that was it. */
static void describe_failure(gb_tls_session *s, int code, char *err, size_t errlen)
{
    char why[256];
    unsigned long e = ERR_peek_error();
    if (e) {
        last_ssl_error(why, sizeof why);
    } else if (code == SSL_ERROR_SYSCALL) {
        snprintf(why, sizeof why, "unexpected end of the stream");
    } else {
        snprintf(why, sizeof why, "SSL error %d", code);
    }
    long verify = SSL_get_verify_result(s->ssl);
    if (verify != X509_V_OK)
        snprintf(err, errlen, "%s (certificate: %s)", why, X509_verify_cert_error_string(verify));
    else
        snprintf(err, errlen, "%s", why);
}

ssize_t gb_tls_read(gb_tls_session *s, char *buf, size_t cap, char *err, size_t errlen)
{
    if (s->failed) {
        snprintf(err, errlen, "the session failed earlier");
        return GB_TLS_FAILED;
    }
    ERR_clear_error();
    int n = SSL_read(s->ssl, buf, cap > INT32_MAX ? INT32_MAX : (int)cap);
    if (n > 0)
        return n;
    int code = SSL_get_error(s->ssl, n);
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE)
        return GB_TLS_WANT_MORE; /* WANT_WRITE cannot stay: the output BIO takes everything */
    if (code == SSL_ERROR_ZERO_RETURN)
        return GB_TLS_CLOSED;
    s->failed = true;
    describe_failure(s, code, err, errlen);
    return GB_TLS_FAILED;
}

int gb_tls_handshake(gb_tls_session *s, char *err, size_t errlen)
{
    if (s->failed) {
        snprintf(err, errlen, "the session failed earlier");
        return -1;
    }
    ERR_clear_error();
    int rc = SSL_do_handshake(s->ssl);
    if (rc == 1)
        return 1;
    int code = SSL_get_error(s->ssl, rc);
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE)
        return 0;
    s->failed = true;
    describe_failure(s, code, err, errlen);
    return -1;
}

int gb_tls_write(gb_tls_session *s, const char *data, size_t len)
{
    if (s->failed || !SSL_is_init_finished(s->ssl))
        return -1;
    while (len > 0) {
        size_t written = 0;
        ERR_clear_error();
        if (SSL_write_ex(s->ssl, data, len, &written) != 1) {
            s->failed = true;
            return -1;
        }
        data += written;
        len -= written;
    }
    return 0;
}

size_t gb_tls_output_pending(const gb_tls_session *s) { return BIO_ctrl_pending(s->out); }

size_t gb_tls_take_output(gb_tls_session *s, char *buf, size_t cap)
{
    size_t got = 0;
    if (cap == 0 || BIO_read_ex(s->out, buf, cap, &got) != 1)
        return 0;
    return got;
}

bool gb_tls_established(const gb_tls_session *s) { return !s->failed && SSL_is_init_finished(s->ssl); }

/* The text of the subject's last CN entry as UTF-8, when it has one that
 * fits cap and holds no NUL (a NUL would let "alice\0x" pass for alice). */
static bool subject_common_name(X509 *cert, char *out, size_t cap)
{
    X509_NAME *subject = X509_get_subject_name(cert);
    int last = -1;
    for (int i = -1; (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0;)
        last = i;
    if (last < 0)
        return false;
    unsigned char *utf8 = NULL;
    int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, last)));
    bool ok = len > 0 && (size_t)len < cap && memchr(utf8, '\0', (size_t)len) == NULL;
    if (ok) {
        memcpy(out, utf8, (size_t)len);
        out[len] = '\0';
    }
    OPENSSL_free(utf8);
    return ok;
}

bool gb_tls_peer_common_name(const gb_tls_session *s, char *out, size_t cap)
{
    if (!gb_tls_established(s) || SSL_get_verify_result(s->ssl) != X509_V_OK)
        return false;
    X509 *cert = SSL_get0_peer_certificate(s->ssl);
    return cert && subject_common_name(cert, out, cap);
}
