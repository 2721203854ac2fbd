/** The `pg` driver's value serializer (lib/utils.js, exported by the package's `./lib/*`; not in @types/pg). */
declare module 'pg/lib/utils.js' {
  const utils: {
    /** A JavaScript value in the text form `pg` sends as a parameter (dates, arrays, objects as JSON, buffers). */
    prepareValue(value: unknown): unknown;
    escapeLiteral(value: string): string;
  };
  export default utils;
}
