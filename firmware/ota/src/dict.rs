//! Reading RAUC's `a{sv}` dictionaries into typed fields: a missing key is `None`, a key of
//! another type than RAUC's reference documents is an error naming the key, and keys nobody
//! asked for are simply left behind (RAUC adds keys in new versions).

use std::collections::HashMap;

use zbus::zvariant::OwnedValue;

use crate::error::{Call, OtaError};

/// Removes `key` from `dict` and converts it to `T` (`String` for `s`, `u32` for `u`, `u64`
/// for `t`, `HashMap<String, OwnedValue>` for `a{sv}`).
///
/// Errors: [`OtaError::UnexpectedReply`] for `call`, naming the key and the type RAUC sent.
pub(crate) fn take<T>(
    call: Call,
    dict: &mut HashMap<String, OwnedValue>,
    key: &str,
) -> Result<Option<T>, OtaError>
where
    T: TryFrom<OwnedValue, Error = zbus::zvariant::Error>,
{
    let Some(value) = dict.remove(key) else {
        return Ok(None);
    };
    let signature = value.value_signature().to_string();
    T::try_from(value)
        .map(Some)
        .map_err(|e| OtaError::unexpected(call, format!("{key}: {signature}: {e}")))
}
