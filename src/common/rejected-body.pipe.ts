import { Injectable, PipeTransform } from '@nestjs/common';
import { RejectedBody } from './nats-json.deserializer';

/** Runs after the API-key guard: a NATS body the deserializer could not take is answered with its 413 or 400. */
@Injectable()
export class RejectedBodyPipe implements PipeTransform {
  transform(value: unknown) {
    if (value instanceof RejectedBody) throw value.error;
    return value;
  }
}
