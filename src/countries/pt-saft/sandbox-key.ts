/**
 * The sandbox producer key: a 1024-bit RSA key pair made for this service's test
 * environment only, published here on purpose (it is NOT a secret and AT knows nothing
 * of it). It signs the SAF-T (PT) documents of test keys whose location names no
 * uploaded producer key (`country_config.at_certificate_id`), even where the service has
 * its certified key configured (that one signs live documents only, signature.ts): the account's sandbox
 * certificate is RSA-2048, whose signature (344 base64 characters) does not fit SAF-T's
 * `Hash` (at most 172 characters, a 1024-bit signature). Documents signed with it have no
 * legal value; anyone can verify them with `SANDBOX_PRODUCER_PUBLIC_KEY_PEM`.
 * See docs/decisions.md "Portugal (issue #14)".
 */
import crypto from 'node:crypto';

export const SANDBOX_PRODUCER_KEY_PEM = `
-----BEGIN PRIVATE KEY-----
MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAKBF/QLXQEwWgSQF
pDcnjUt2/L6ArFdz/KgXHUknHV9wj0g1yvkyIXjxvffc+mmVULDHezRAaR8Ok+ur
WpaOe01WWvpYlK1MwJAX4RQcNDBC4DsTwPLJ/Eheh9kfUrV6RajgeZ0gTvvmqEaT
ChiI4p2+oohm1fTcGXB6SjMZP8IPAgMBAAECgYBNmXVmEbgk3uSJ/11CAxlrR2Ia
DozjDtpuvDpGt/SFyCbnjHwI6ZfBSjJzNv/bbRsTbJIfe2wqSFGgUmfa64OQ6xTc
yRpiVAeRmB1f4gtDrUF+skreVYctBBvmbr++hDSCu+38qCLmmPQcaieXb9bRk56a
Apgb8Clkf4yEV+ckEQJBANFNpp3uMJC51Tam3fbasd6aEup9+Z3bmBEjtmVh/hTC
ocqbz13bHBV31fUs1s1Lr21xlt3mM3/eJmr8ksa/rNcCQQDEB/7MqAZT64MgKiol
SrtbI9ADjl7AR/E61fnuIS16QQRrYzdwX8uuWL5niRi4dxurwENjscxYsfpNQYJf
AnWJAkAyOGyLJnTWtRA4vc8yhQT6wYNaaoGzY9ZX/nasWtfpSU4i3EHkZkeVyxw2
aNzdg5SDMSce9TZULwyOzS22rJUfAkEAmc1YGYQ/KrqeL69FT+r5YoGPpCqgpqYL
W0klBbOcNc4rRIIcrhtK+CiCg0MqVRiGalO3y9Fk7bX+F30tZ5PLWQJALfiE2W9y
yvlWOl7bYZQ5Bq8REeYKXiNx0BFohH7ac2ptUV4mkQO7qyxjhXzQq1O2dcIHYOsI
B5wWJ54/ZXWuJA==
-----END PRIVATE KEY-----
`.trim();

export const sandboxProducerKey: crypto.KeyObject = crypto.createPrivateKey(SANDBOX_PRODUCER_KEY_PEM);

export const SANDBOX_PRODUCER_PUBLIC_KEY_PEM: string = crypto.createPublicKey(sandboxProducerKey).export({ type: 'spki', format: 'pem' }).toString();
