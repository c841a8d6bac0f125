// Minimal JSX typings so the workspace type-checks without React installed.
declare namespace JSX {
  interface Element {}
  interface IntrinsicElements {
    [name: string]: Record<string, unknown>;
  }
}
