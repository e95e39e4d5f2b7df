import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { CallerIdentity } from './api-keys';

/** The caller, set by the API-key guard on the request (REST) or the message context (NATS). */
const callers = new WeakMap<object, CallerIdentity>();

/** The object one request is known by, whichever transport carried it. */
export function requestOf(context: ExecutionContext): object {
  return context.getType() === 'rpc' ? context.switchToRpc().getContext() : context.switchToHttp().getRequest();
}

export function setCaller(context: ExecutionContext, caller: CallerIdentity): void {
  callers.set(requestOf(context), caller);
}

/** The authenticated caller (name and role, from the API-key guard), as a handler parameter. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): CallerIdentity => {
  const caller = callers.get(requestOf(context));
  if (!caller) throw new Error('no caller: the API-key guard did not run for this handler');
  return caller;
});
