/**
 * Keys nothing can open: what a pass seals or encrypts for when its output is only compared or checked and
 * never kept (a lifecycle render, the full pass rehearsed before the infra pass writes). The certificate's
 * subject still says "drift render", the purpose it was first made for.
 */
/** A self-signed certificate made for renders and rehearsals only; its private key was discarded when it was made. */
export const THROWAWAY_SEALING_CERT = `-----BEGIN CERTIFICATE-----
MIIDmTCCAoGgAwIBAgIUTubHTGULxpBdtr3EzS0Rk6cGed0wDQYJKoZIhvcNAQEL
BQAwWzE9MDsGA1UEAww0Z2l0b3BzLXNjYWZmb2xkZXIgZHJpZnQgcmVuZGVyIChu
byBwcml2YXRlIGtleSBrZXB0KTEaMBgGA1UECgwRZ2l0b3BzLXNjYWZmb2xkZXIw
IBcNMjYxMjA3MTcxMDU3WhgPMjEyNjExMTMxNzEwNTdaMFsxPTA7BgNVBAMMNGdp
dG9wcy1zY2FmZm9sZGVyIGRyaWZ0IHJlbmRlciAobm8gcHJpdmF0ZSBrZXkga2Vw
dCkxGjAYBgNVBAoMEWdpdG9wcy1zY2FmZm9sZGVyMIIBIjANBgkqhkiG9w0BAQEF
AAOCAQ8AMIIBCgKCAQEAv6w7+RGlGGfMUyt2LUwJentHGe5bFxcRY1D8gYVDvPkT
lIxTpWLGKjPmsHm0XcyVldmUrQ3O8Eb0/iB7x9wL04gBU7hKFtnxW9XZL6sKd+JR
fmfmEcE2qo6gi4PEGfW+6wedUIVz8FovCkp8VWVKht6cQ68WqL7uC0TiFIqdvF23
aFlZ0GahkRrIsTql6pROWeRLbXOkwaEq1y7rzAmbmQwaoddGpv4FxXBZK3teaIVe
u1dmGu8UxoVhf3JNnbD6dzNQiIQ7LnwbQvNohneU/8cxYzvrbpcCRa3aYRs2PVDf
0fMVqEBvXW8tRgZXiUt78FKENin6FuIQaoiL78Y3EwIDAQABo1MwUTAdBgNVHQ4E
FgQUnaXQ6BZRU4C62/TljCZAO86DCp8wHwYDVR0jBBgwFoAUnaXQ6BZRU4C62/Tl
jCZAO86DCp8wDwYDVR0TAQH/BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEArwlU
sSxnWvuPb41u4PGoZChMG9bBYBb+pxnvz0jddJfXPZ2dsGfEPQ0CGIC13j/fMsPx
V/hi+bqfiCYKmhWVN715ks6nocv1VHmKbghumJqimD8PFEpPDoCVf9EUfhWZ8q6w
gkgixRkxIrpL16f3ePOtgSUgnapFrFvvPhDCHqem05Dvx714vsnQm8o1RYt5+OYM
QbhnGmeI2fYV2nXVItczIygKPi5HOL5Hl3cH5uRuWGpQ53HLn5hpJqT9P5FVWjzj
Az9dbygiVOE8TVgzZ0URXlSnc8Q+cY+tk2rlqS1uJB0BJUfs8izpAsWQxGKm2KCR
bSuCCUGsSI3y92dr+Q==
-----END CERTIFICATE-----
`;
/** An age public key made for renders and rehearsals only; its identity was discarded when it was made. */
export const THROWAWAY_AGE_RECIPIENT = 'age1ts0tsgs4lylm4ekt8pa07qd7ac0vd4qvtys9fetnxasf3tzx6pjsnnj70p';
