; Definitions for Elixir. See python.scm for the capture conventions.
; Elixir has no definition syntax of its own: `defmodule`, `def` and friends are macro
; calls, so every pattern matches a call by its target's name.

(call
  target: (identifier) @_keyword
  (arguments . (alias) @name)
  (#any-of? @_keyword "defmodule" "defprotocol" "defimpl")) @definition.module

; def f(a), do: ...   /   def f(a) when guard do ... end   /   def f, do: ...
(call
  target: (identifier) @_keyword
  (arguments . (call target: (identifier) @name))
  (#any-of? @_keyword "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp")) @definition.function

(call
  target: (identifier) @_keyword
  (arguments . (binary_operator left: (call target: (identifier) @name)))
  (#any-of? @_keyword "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defn" "defnp")) @definition.function

(call
  target: (identifier) @_keyword
  (arguments . (identifier) @name)
  (#any-of? @_keyword "def" "defp" "defmacro" "defmacrop")) @definition.function

; @type t :: ...   @typep   @opaque
(unary_operator
  operand: (call
    target: (identifier) @_keyword
    (arguments . (binary_operator left: [(identifier) @name (call target: (identifier) @name)])))
  (#any-of? @_keyword "type" "typep" "opaque")) @definition.type
