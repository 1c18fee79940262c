"""Sign-in for a shared dashboard: Streamlit's built-in OpenID Connect (``st.login``/``st.user``).

With ``[access] require_login = true`` in audit.toml, nothing of the dashboard runs for a
signed-out visitor: :func:`gate` shows a sign-in button and stops the script. The provider is set
up in ``.streamlit/secrets.toml`` (``[auth]``: ``redirect_uri``, ``cookie_secret``, ``client_id``,
``client_secret``, ``server_metadata_url``; docs/security.md, *Sign-in*). A signed-in user whose
e-mail is not on the optional ``allowed`` list (addresses or ``@domain``) is refused.
"""

from __future__ import annotations

import streamlit as st

from audit.config import Config

from .text import md

__all__ = ["gate", "signed_in_user"]


def gate(cfg: Config) -> None:
    """Stop the script unless sign-in is off, or the visitor is signed in and allowed."""
    if not cfg.require_login:
        return
    if not st.user.is_logged_in:
        st.title("Retrieval audit")
        st.info("This dashboard is shared: sign in with your team account to open it.")
        st.button("Sign in", key="access_login", on_click=st.login, type="primary")
        st.stop()
    email = st.user.get("email")
    if not cfg.user_allowed(email):
        st.title("Retrieval audit")
        st.error(md(f"{email or 'This account'} is not on this dashboard's list of allowed users")
                 + " ([access] allowed in audit.toml): ask its operator.")
        st.button("Sign out", key="access_logout_refused", on_click=st.logout)
        st.stop()
    with st.sidebar:
        st.caption(md(f"Signed in as {email}"))
        st.button("Sign out", key="access_logout", on_click=st.logout)


def signed_in_user(cfg: Config) -> str | None:
    """The signed-in user's e-mail in shared mode (``require_login``), else None (single-user: a typed name)."""
    if not cfg.require_login or not st.user.is_logged_in:
        return None
    return st.user.get("email") or st.user.get("name") or None
