// The routes. Signed-out pages: /sign-in, /first-account, /sign-up, /set-password. Everything else is signed-in,
// inside the Layout (header + navigation), except "Page not found", which any visitor can see.
import { Navigate, Route, Routes } from 'react-router';
import { Layout, PublicFrame } from './components/Layout.tsx';
import { HOME, PublicOnly, RequireAuth } from './components/RequireAuth.tsx';
import { useSession } from './hooks/session.ts';
import { AdminUsersScene } from './scenes/AdminUsers/AdminUsersScene.tsx';
import { AskScene } from './scenes/Ask/AskScene.tsx';
import { DocumentScene } from './scenes/Document/DocumentScene.tsx';
import { FirstAccountScene } from './scenes/FirstAccount/FirstAccountScene.tsx';
import { KnowledgeBaseScene } from './scenes/KnowledgeBase/KnowledgeBaseScene.tsx';
import { KnowledgeBasesScene } from './scenes/KnowledgeBases/KnowledgeBasesScene.tsx';
import { NotFoundScene } from './scenes/NotFound/NotFoundScene.tsx';
import { AccountScene } from './scenes/Settings/AccountScene.tsx';
import { ApiKeysScene } from './scenes/Settings/ApiKeysScene.tsx';
import { SetPasswordScene } from './scenes/SetPassword/SetPasswordScene.tsx';
import { SignInScene } from './scenes/SignIn/SignInScene.tsx';
import { SignUpScene } from './scenes/SignUp/SignUpScene.tsx';

export function App() {
  return (
    <Routes>
      <Route
        path="/sign-in"
        element={
          <PublicOnly>
            <SignInScene />
          </PublicOnly>
        }
      />
      <Route
        path="/first-account"
        element={
          <PublicOnly>
            <FirstAccountScene />
          </PublicOnly>
        }
      />
      <Route
        path="/sign-up"
        element={
          <PublicOnly>
            <SignUpScene />
          </PublicOnly>
        }
      />
      {/* Not PublicOnly: an invitation link may be opened in a browser where someone else is signed in. */}
      <Route path="/set-password" element={<SetPasswordScene />} />

      <Route
        element={
          <RequireAuth>
            <Layout />
          </RequireAuth>
        }
      >
        <Route index element={<Navigate to={HOME} replace />} />
        <Route path="knowledge-bases" element={<KnowledgeBasesScene />} />
        <Route path="knowledge-bases/:id" element={<KnowledgeBaseScene />} />
        <Route path="documents/:id" element={<DocumentScene />} />
        <Route path="ask/:conversationId?" element={<AskScene />} />
        <Route path="settings" element={<Navigate to="/settings/api-keys" replace />} />
        <Route path="settings/api-keys" element={<ApiKeysScene />} />
        <Route path="settings/account" element={<AccountScene />} />
        <Route path="admin" element={<Navigate to="/admin/users" replace />} />
        <Route path="admin/users" element={<AdminUsersScene />} />
      </Route>

      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}

/** With the header when signed in, in the public frame otherwise. */
function NotFound() {
  const session = useSession();
  if (session.data) {
    return (
      <Layout>
        <NotFoundScene />
      </Layout>
    );
  }
  return (
    <PublicFrame>
      <NotFoundScene />
    </PublicFrame>
  );
}
