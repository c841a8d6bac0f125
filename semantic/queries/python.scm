; Definitions for Python. Capture conventions (shared by every language):
;   @definition.<kind>  the whole definition node (kind from storage.model.SYMBOL_KINDS;
;                       a function nested in a class-like symbol becomes a method)
;   @name               the identifier that names it
;   @receiver / @scope  (other languages) extra container names

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

; Module-level ALL_CAPS assignments are constants. (This grammar version has no
; expression_statement wrapper: assignments are direct children of the module.)
(module
  (assignment
    left: (identifier) @name) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))
