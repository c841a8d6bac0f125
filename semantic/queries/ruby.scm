; Definitions for Ruby. See python.scm for the capture conventions.

(module
  name: [(constant) (scope_resolution)] @name) @definition.module

(class
  name: [(constant) (scope_resolution)] @name) @definition.class

(method
  name: (_) @name) @definition.function

(singleton_method
  name: (_) @name) @definition.method

(assignment
  left: (constant) @name) @definition.constant

; Methods that class-body calls define. `attr_reader :items, :owner` defines both (a field:
; its reader and writer); `delegate :name, :email, to: :user` defines both; the others
; define the method their first symbol names. Only direct symbol arguments count: the
; `:destroy` of `dependent: :destroy` is an option, not a definition.
(call
  method: (identifier) @_dsl
  arguments: (argument_list (simple_symbol) @name)
  (#match? @_dsl "^attr_(reader|writer|accessor)$")) @definition.field

(call
  method: (identifier) @_dsl
  arguments: (argument_list (simple_symbol) @name)
  (#eq? @_dsl "delegate")) @definition.method

(call
  method: (identifier) @_dsl
  arguments: (argument_list . (simple_symbol) @name)
  (#match? @_dsl "^(alias_method|define_method|define_singleton_method|scope|has_many|has_one|belongs_to|has_and_belongs_to_many)$")) @definition.method

(alias
  name: (_) @name) @definition.method
