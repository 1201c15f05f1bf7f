//! `json!`, as serde_json's macro builds values, with smaller code at each use: every entry of
//! an object goes through one out-of-line `put`, and every interpolated value through one
//! `to::<T>` per type, instead of an inlined insert, key conversion, `to_value` and `unwrap`
//! at each of the few hundred places the sandbox builds JSON. The grammar is serde_json's.

use serde::Serialize;
use serde_json::{Map, Value};

/// An object's entry: `map.insert(key, value)`, the old value dropped.
#[inline(never)]
pub fn put(map: &mut Map<String, Value>, key: String, value: Value) {
    map.insert(key, value);
}

/// An interpolated value: `serde_json::to_value(value).unwrap()`.
#[inline(never)]
pub fn to<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

macro_rules! json {
    ($($json:tt)+) => {
        $crate::util::json_macro::json_internal!($($json)+)
    };
}

macro_rules! json_internal {
    // The inside of an array [...]: a vec![...] of the elements.
    (@array [$($elems:expr,)*]) => {
        vec![$($elems,)*]
    };
    (@array [$($elems:expr),*]) => {
        vec![$($elems),*]
    };
    (@array [$($elems:expr,)*] null $($rest:tt)*) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)* $crate::util::json_macro::json_internal!(null)] $($rest)*)
    };
    (@array [$($elems:expr,)*] true $($rest:tt)*) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)* $crate::util::json_macro::json_internal!(true)] $($rest)*)
    };
    (@array [$($elems:expr,)*] false $($rest:tt)*) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)* $crate::util::json_macro::json_internal!(false)] $($rest)*)
    };
    (@array [$($elems:expr,)*] [$($array:tt)*] $($rest:tt)*) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)* $crate::util::json_macro::json_internal!([$($array)*])] $($rest)*)
    };
    (@array [$($elems:expr,)*] {$($map:tt)*} $($rest:tt)*) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)* $crate::util::json_macro::json_internal!({$($map)*})] $($rest)*)
    };
    (@array [$($elems:expr,)*] $next:expr, $($rest:tt)*) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)* $crate::util::json_macro::json_internal!($next),] $($rest)*)
    };
    (@array [$($elems:expr,)*] $last:expr) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)* $crate::util::json_macro::json_internal!($last)])
    };
    (@array [$($elems:expr),*] , $($rest:tt)*) => {
        $crate::util::json_macro::json_internal!(@array [$($elems,)*] $($rest)*)
    };
    (@array [$($elems:expr),*] $unexpected:tt $($rest:tt)*) => {
        compile_error!("json!: unexpected token in array")
    };

    // The inside of an object {...}: each entry put into the map variable.
    (@object $object:ident () () ()) => {};
    (@object $object:ident [$($key:tt)+] ($value:expr) , $($rest:tt)*) => {
        $crate::util::json_macro::put(&mut $object, ($($key)+).into(), $value);
        $crate::util::json_macro::json_internal!(@object $object () ($($rest)*) ($($rest)*));
    };
    (@object $object:ident [$($key:tt)+] ($value:expr) $unexpected:tt $($rest:tt)*) => {
        compile_error!("json!: unexpected token after an entry");
    };
    (@object $object:ident [$($key:tt)+] ($value:expr)) => {
        $crate::util::json_macro::put(&mut $object, ($($key)+).into(), $value);
    };
    (@object $object:ident ($($key:tt)+) (: null $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object [$($key)+] ($crate::util::json_macro::json_internal!(null)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: true $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object [$($key)+] ($crate::util::json_macro::json_internal!(true)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: false $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object [$($key)+] ($crate::util::json_macro::json_internal!(false)) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: [$($array:tt)*] $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object [$($key)+] ($crate::util::json_macro::json_internal!([$($array)*])) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: {$($map:tt)*} $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object [$($key)+] ($crate::util::json_macro::json_internal!({$($map)*})) $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr , $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object [$($key)+] ($crate::util::json_macro::json_internal!($value)) , $($rest)*);
    };
    (@object $object:ident ($($key:tt)+) (: $value:expr) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object [$($key)+] ($crate::util::json_macro::json_internal!($value)));
    };
    (@object $object:ident ($($key:tt)+) (:) $copy:tt) => {
        compile_error!("json!: missing value");
    };
    (@object $object:ident ($($key:tt)+) () $copy:tt) => {
        compile_error!("json!: missing colon and value");
    };
    (@object $object:ident () (: $($rest:tt)*) ($colon:tt $($copy:tt)*)) => {
        compile_error!("json!: misplaced colon");
    };
    (@object $object:ident ($($key:tt)*) (, $($rest:tt)*) ($comma:tt $($copy:tt)*)) => {
        compile_error!("json!: comma inside a key");
    };
    (@object $object:ident () (($key:expr) : $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object ($key) (: $($rest)*) (: $($rest)*));
    };
    (@object $object:ident ($($key:tt)*) (: $($unexpected:tt)+) $copy:tt) => {
        compile_error!("json!: expected an expression and a comma");
    };
    (@object $object:ident ($($key:tt)*) ($tt:tt $($rest:tt)*) $copy:tt) => {
        $crate::util::json_macro::json_internal!(@object $object ($($key)* $tt) ($($rest)*) ($($rest)*));
    };

    (null) => {
        serde_json::Value::Null
    };
    (true) => {
        serde_json::Value::Bool(true)
    };
    (false) => {
        serde_json::Value::Bool(false)
    };
    ([]) => {
        serde_json::Value::Array(vec![])
    };
    ([ $($tt:tt)+ ]) => {
        serde_json::Value::Array($crate::util::json_macro::json_internal!(@array [] $($tt)+))
    };
    ({}) => {
        serde_json::Value::Object(serde_json::Map::new())
    };
    ({ $($tt:tt)+ }) => {
        serde_json::Value::Object({
            let mut object = serde_json::Map::new();
            $crate::util::json_macro::json_internal!(@object object () ($($tt)+) ($($tt)+));
            object
        })
    };
    // Any Serialize type: numbers, strings, variables etc. Below every other rule.
    ($other:expr) => {
        $crate::util::json_macro::to(&$other)
    };
}

pub(crate) use {json, json_internal};
