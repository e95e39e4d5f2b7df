/** Input the caller can fix (bad flag, missing reference env, foreign cluster dir): exit code 2, one line. */
export class GeneratorInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeneratorInputError';
  }
}

/** The generated tree would be broken (kustomize build fails, a check on the output fails): nothing is written. */
export class GeneratorValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeneratorValidationError';
  }
}
