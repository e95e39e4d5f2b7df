/** The development cluster's plaintext credentials planted in the shipped template (test data). */
export const SHIPPED_PLANTED = [
  'DevPgPassw0rd-Insecure-2024',
  'platform_dev',
  'dev_rabbit',
  'DevRabbitSecret-91ab2c',
  'DevErlangCookieSharedAcrossClusters',
  'dev-puller',
  'DevRegistryPass-7f3a91c2',
  'ZGV2LXB1bGxlcjpEZXZSZWdpc3RyeVBhc3MtN2YzYTkxYzI=',
];

/** Each value and its base64 form (without padding, so it also matches inside longer base64). */
export const withBase64 = (values: string[]) =>
  values.flatMap((v) => [v, Buffer.from(v).toString('base64').replace(/=+$/, '')]);
