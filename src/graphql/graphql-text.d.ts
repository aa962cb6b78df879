// tsup (loader `.graphql: text`) and vitest (the `graphql-text` plugin) load `.graphql` files as text.
declare module '*.graphql' {
  const text: string;
  export default text;
}
