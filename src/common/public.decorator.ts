import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'gitops-scaffolder:public';

/** Marks a handler (or controller) that answers without an API key: health, metrics, the OpenAPI document. */
export const Public = () => SetMetadata(IS_PUBLIC, true);
