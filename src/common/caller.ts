import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** The caller's name, set by the API-key guard on the request (REST) or the message context (NATS). */
const callers = new WeakMap<object, string>();

/** The object one request is known by, whichever transport carried it. */
export function requestOf(context: ExecutionContext): object {
  return context.getType() === 'rpc' ? context.switchToRpc().getContext() : context.switchToHttp().getRequest();
}

export function setCaller(context: ExecutionContext, caller: string): void {
  callers.set(requestOf(context), caller);
}

/** The authenticated caller's name (from the API-key guard), as a handler parameter. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): string => {
  const caller = callers.get(requestOf(context));
  if (!caller) throw new Error('no caller: the API-key guard did not run for this handler');
  return caller;
});
